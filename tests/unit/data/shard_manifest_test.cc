// The data folder's MANIFEST: what pstrain-data writes last, and the readers' checks against it before HDF5
// opens a shard.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/file_manifest.h"
#include "data/shard.h"
#include "data/vocabulary.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::TempDir;

// A converted folder as pstrain-data leaves it: two train shards, test.h5, then the MANIFEST.
void write_converted_folder(const fs::path& folder) {
  write_shard(folder / train_shard_file_name(0), testing::make_samples(5));
  write_shard(folder / train_shard_file_name(1), testing::make_samples(4));
  write_shard(folder / kTestShardFileName, testing::make_samples(3));
  write_data_manifest(folder);
}

void flip_byte(const fs::path& path, std::size_t at) {
  testing::Bytes bytes = testing::read_raw(path);
  ASSERT_LT(at, bytes.size());
  bytes[at] ^= 0x10;
  testing::write_raw(path, bytes);
}

TEST(DataManifestTest, ListsEveryShardWithItsSizeAndChecksum) {
  TempDir dir;
  write_converted_folder(dir.path());
  testing::write_raw(dir / "notes.txt", {1, 2});  // not part of the conversion
  const std::vector<ManifestEntry> entries = read_manifest(dir.path(), kDataManifest);
  std::vector<std::string> names;
  for (const ManifestEntry& entry : entries) {
    names.push_back(entry.name);
    EXPECT_EQ(entry.size, fs::file_size(dir / entry.name)) << entry.name;
    EXPECT_EQ(entry.crc32, file_crc32(dir / entry.name)) << entry.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"train-00000.h5", "train-00001.h5", "test.h5"}));
}

TEST(DataManifestTest, ListsTheVocabularyAndValidationShardWhenPresent) {
  TempDir dir;
  testing::write_raw(dir / kVocabularyFileName, {'a', '\n'});
  write_shard(dir / kValidShardFileName, testing::make_samples(2));
  write_converted_folder(dir.path());
  std::vector<std::string> names;
  for (const ManifestEntry& entry : read_manifest(dir.path(), kDataManifest)) names.push_back(entry.name);
  EXPECT_NE(std::find(names.begin(), names.end(), kVocabularyFileName), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), kValidShardFileName), names.end());
}

TEST(DataManifestTest, ShardsOfAListedFolderReadAsWritten) {
  TempDir dir;
  write_converted_folder(dir.path());
  EXPECT_EQ(list_train_shards(dir.path()).size(), 2u);
  EXPECT_EQ(read_shard(dir / train_shard_file_name(1)).labels, testing::make_samples(4).labels);
  EXPECT_EQ(read_shard_meta(dir / kTestShardFileName).sample_count, 3u);
}

TEST(DataManifestTest, FlippedBitIsRefusedAsCorruptBeforeHdf5ReadsTheShard) {
  TempDir dir;
  write_converted_folder(dir.path());
  // Byte 0 is HDF5's signature: flipped, HDF5 alone would say "not an HDF5 file", so the message proves the
  // checksum was looked at first.
  flip_byte(dir / train_shard_file_name(1), 0);
  for (const auto& read :
       std::vector<std::function<void()>>{[&] { read_shard(dir / train_shard_file_name(1)); },
                                          [&] { read_shard_meta(dir / train_shard_file_name(1)); }}) {
    expect_error(read, ExitCode::kInputData, {"train-00001.h5", "does not match the manifest", "the file is corrupt"});
  }
}

TEST(DataManifestTest, TruncatedShardIsNamedTruncated) {
  TempDir dir;
  write_converted_folder(dir.path());
  const fs::path shard = dir / kTestShardFileName;
  fs::resize_file(shard, fs::file_size(shard) - 100);
  expect_error([&] { read_shard(shard); }, ExitCode::kInputData, {"test.h5", "bytes, the manifest says", "truncated"});
}

TEST(DataManifestTest, FolderThatLostItsHighestShardIsRefused) {
  TempDir dir;
  write_converted_folder(dir.path());
  fs::remove(dir / train_shard_file_name(1));  // no gap: only the manifest knows
  expect_error([&] { list_train_shards(dir.path()); }, ExitCode::kInputData,
               {"holds 1 train shards but its MANIFEST lists 2", "convert the data again"});
}

TEST(DataManifestTest, ShardAddedAfterTheConversionIsRefused) {
  TempDir dir;
  write_converted_folder(dir.path());
  write_shard(dir / train_shard_file_name(2), testing::make_samples(2));
  expect_error([&] { list_train_shards(dir.path()); }, ExitCode::kInputData, {"holds 3 train shards", "lists 2"});
  expect_error([&] { read_shard(dir / train_shard_file_name(2)); }, ExitCode::kInputData,
               {"train-00002.h5 is not listed in", "MANIFEST"});
}

// Regression: a second conversion into the same folder with fewer shards (pstrain-data removes the stale ones)
// listed its shards against the first conversion's MANIFEST and refused to write its own.
TEST(DataManifestTest, ConvertingAgainWithFewerShardsReplacesTheManifest) {
  TempDir dir;
  write_converted_folder(dir.path());
  write_shard(dir / train_shard_file_name(2), testing::make_samples(2));
  write_data_manifest(dir.path());  // the first conversion: 3 shards
  remove_train_shards_from(dir.path(), 2);
  write_data_manifest(dir.path());  // the second: 2
  EXPECT_EQ(list_train_shards(dir.path()).size(), 2u);
}

TEST(DataManifestTest, ManifestOfAnotherKindIsRefused) {
  TempDir dir;
  write_converted_folder(dir.path());
  testing::write_raw(dir / kManifestName, {'p', 's', 't', 'r', 'a', 'i', 'n', '-',  'c', 'h', 'e', 'c', 'k',
                                           'p', 'o', 'i', 'n', 't', ' ', '1', '\n', 'e', 'n', 'd', '\n'});
  expect_error([&] { read_shard(dir / kTestShardFileName); }, ExitCode::kInputData,
               {"is not a pstrain data folder manifest"});
}

TEST(DataManifestTest, FolderWithoutManifestIsReadUnchecked) {
  TempDir dir;
  write_converted_folder(dir.path());
  fs::remove(dir / kManifestName);
  flip_byte(dir / kTestShardFileName, 0);  // nothing to compare against: HDF5's own check speaks
  EXPECT_EQ(list_train_shards(dir.path()).size(), 2u);
  expect_error([&] { read_shard(dir / kTestShardFileName); }, ExitCode::kInputData, {"not an HDF5 file"});
}

}  // namespace
}  // namespace pstrain::data
