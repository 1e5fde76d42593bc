#include <gtest/gtest.h>

#include "data/shard.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::TempDir;

void touch(const fs::path& path) {
  testing::write_raw(path, {1});
}

TEST(ShardFolder, FileNames) {
  EXPECT_EQ(train_shard_file_name(0), "train-00000.h5");
  EXPECT_EQ(train_shard_file_name(42), "train-00042.h5");
  EXPECT_EQ(train_shard_file_name(123456), "train-123456.h5");
}

TEST(ShardFolder, ListsShardsInIndexOrderIgnoringOtherFiles) {
  TempDir dir;
  for (int i : {2, 0, 10, 1, 3, 4, 5, 6, 7, 8, 9}) touch(dir / train_shard_file_name(i));
  touch(dir / "test.h5");
  touch(dir / "train-00011.h5.tmp-1234");  // an interrupted write
  touch(dir / "train-1.h5");               // not canonically named
  touch(dir / "notes.txt");
  const std::vector<fs::path> shards = list_train_shards(dir.path());
  ASSERT_EQ(shards.size(), 11u);
  for (std::size_t i = 0; i < shards.size(); ++i) EXPECT_EQ(shards[i], dir / train_shard_file_name(i));
}

TEST(ShardFolder, MissingFolder) {
  TempDir dir;
  expect_error([&] { list_train_shards(dir / "absent"); }, ExitCode::kInputData,
               {"data folder", "absent", "does not exist (run pstrain-data first)"});
  expect_error([&] { test_shard_path(dir / "absent"); }, ExitCode::kInputData, {"absent", "does not exist"});
}

TEST(ShardFolder, NoShards) {
  TempDir dir;
  touch(dir / "test.h5");
  expect_error([&] { list_train_shards(dir.path()); }, ExitCode::kInputData, {"holds no train-NNNNN.h5"});
}

TEST(ShardFolder, Gap) {
  TempDir dir;
  for (int i : {0, 1, 3}) touch(dir / train_shard_file_name(i));
  expect_error([&] { list_train_shards(dir.path()); }, ExitCode::kInputData,
               {"train-00002.h5 is missing", "train-00003.h5"});
}

TEST(ShardFolder, FirstShardMissing) {
  TempDir dir;
  touch(dir / train_shard_file_name(1));
  expect_error([&] { list_train_shards(dir.path()); }, ExitCode::kInputData, {"train-00000.h5 is missing"});
}

TEST(ShardFolder, TestShard) {
  TempDir dir;
  expect_error([&] { test_shard_path(dir.path()); }, ExitCode::kInputData, {"has no test.h5"});
  touch(dir / "test.h5");
  EXPECT_EQ(test_shard_path(dir.path()), dir / "test.h5");
}

TEST(ShardFolder, RemovesShardsFromIndex) {
  TempDir dir;
  for (int i = 0; i < 6; ++i) touch(dir / train_shard_file_name(i));
  touch(dir / "test.h5");
  const std::vector<fs::path> removed = remove_train_shards_from(dir.path(), 4);
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_EQ(list_train_shards(dir.path()).size(), 4u);
  EXPECT_TRUE(fs::exists(dir / "test.h5"));
  EXPECT_TRUE(remove_train_shards_from(dir.path(), 4).empty());
}

TEST(ShardFolder, ConversionFilesAreEveryNamePstrainDataWritesAndNoOther) {
  TempDir dir;
  EXPECT_TRUE(conversion_files_in(dir / "absent").empty());
  EXPECT_TRUE(conversion_files_in(dir.path()).empty());
  for (const char* other : {"notes.txt", "train-1.h5", "mine.npz", "test.h5.bak", "train.csv"}) touch(dir / other);
  EXPECT_TRUE(conversion_files_in(dir.path()).empty());
  const std::vector<std::string> written{".pstrain-data-partial-77", "MANIFEST", "test.h5",   "train-00000.h5",
                                         "train-00003.h5.tmp-12",    "valid.h5", "vocab.txt", "vocab.txt.tmp-9"};
  for (const std::string& name : written) touch(dir / name);
  EXPECT_EQ(conversion_files_in(dir.path()), written);
}

}  // namespace
}  // namespace pstrain::data
