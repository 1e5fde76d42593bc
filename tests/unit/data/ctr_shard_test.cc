// CTR shards: what the writer takes comes back through CtrShardRows, range by range, as core::JaggedIds; the
// MANIFEST check and the refusals of damaged or foreign files.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "data/ctr/ctr_folder_writer.h"
#include "data/ctr/ctr_shard.h"
#include "data/shard.h"
#include "test_files.h"

namespace pstrain::data::ctr {
namespace {

using testing::expect_error;
using testing::TempDir;

CtrLayout small_layout() {
  return {"test", {"d0", "d1", "d2"}, {"one", "multi", "sparse"}};
}

// Bags per sample and field as plain nested vectors: the reference the columns are built from.
using Bags = std::vector<std::vector<std::vector<std::uint64_t>>>;  // [sample][field][id]

struct Reference {
  Bags bags;
  std::vector<float> dense;
  std::vector<std::int32_t> labels;
};

Reference random_reference(std::size_t samples, unsigned seed) {
  std::mt19937_64 random(seed);
  Reference ref;
  for (std::size_t s = 0; s < samples; ++s) {
    std::vector<std::vector<std::uint64_t>> fields(3);
    fields[0] = {random()};  // full 64-bit ids, the top bit included
    for (std::size_t k = random() % 5; k > 0; --k) fields[1].push_back(random() % 1000);
    if (random() % 3 == 0) fields[2] = {0xffffffffffffffffull};
    ref.bags.push_back(fields);
    for (int d = 0; d < 3; ++d) ref.dense.push_back(static_cast<float>(random() % 1000) / 7.0f);
    ref.labels.push_back(static_cast<std::int32_t>(random() % 2));
  }
  return ref;
}

CtrColumns columns_of(const Reference& ref) {
  CtrColumns columns(3);
  for (std::size_t s = 0; s < ref.bags.size(); ++s) {
    for (std::size_t f = 0; f < 3; ++f) {
      columns.values[f].insert(columns.values[f].end(), ref.bags[s][f].begin(), ref.bags[s][f].end());
      columns.offsets[f].push_back(columns.values[f].size());
    }
  }
  columns.dense = ref.dense;
  columns.labels = ref.labels;
  columns.samples = ref.bags.size();
  return columns;
}

void expect_batch_matches(const CtrBatch& batch, const Reference& ref, std::size_t first) {
  ASSERT_EQ(batch.ids.fields, 3u);
  ASSERT_EQ(batch.ids.samples, batch.samples);
  ASSERT_EQ(batch.ids.offsets.size(), 3 * batch.samples + 1);
  for (std::size_t s = 0; s < batch.samples; ++s) {
    EXPECT_EQ(batch.labels[s], ref.labels[first + s]);
    for (std::size_t d = 0; d < 3; ++d) EXPECT_EQ(batch.dense[s * 3 + d], ref.dense[(first + s) * 3 + d]);
    for (std::size_t f = 0; f < 3; ++f) {
      const auto bag = batch.ids.bag(f, s);
      EXPECT_EQ(std::vector<std::uint64_t>(bag.begin(), bag.end()), ref.bags[first + s][f])
          << "sample " << first + s << " field " << f;
    }
  }
}

TEST(CtrShard, RangesReadBackAsWrittenAcrossAppends) {
  TempDir dir;
  const Reference ref = random_reference(500, 1);
  const CtrColumns columns = columns_of(ref);
  CtrShardWriter writer(dir / "train-00000.h5", small_layout(), true);
  writer.append(columns, 0, 123);  // in uneven pieces: offsets must continue across appends
  writer.append(columns, 123, 0);
  writer.append(columns, 123, 377);
  writer.finish("unit test");
  const CtrShardRows rows(dir / "train-00000.h5");
  EXPECT_EQ(rows.meta().sample_count, 500u);
  EXPECT_EQ(rows.meta().layout, small_layout());
  EXPECT_TRUE(rows.meta().labeled);
  std::vector<std::uint64_t> longest(3, 0);
  for (const auto& sample : ref.bags) {
    for (std::size_t f = 0; f < 3; ++f) longest[f] = std::max<std::uint64_t>(longest[f], sample[f].size());
  }
  EXPECT_EQ(rows.meta().max_bag, longest);
  for (const auto& [first, count] : {std::pair{0, 500}, {0, 1}, {499, 1}, {120, 7}, {250, 0}, {1, 498}}) {
    expect_batch_matches(rows.read(first, count), ref, first);
  }
}

TEST(CtrShard, JaggedIdsOfColumnsIsFieldMajor) {
  const Reference ref = random_reference(40, 2);
  const core::JaggedIds ids = jagged_ids_of(columns_of(ref), 10, 20);
  for (std::size_t f = 0; f < 3; ++f) {
    std::vector<std::uint64_t> expected;
    for (std::size_t s = 10; s < 30; ++s) expected.insert(expected.end(), ref.bags[s][f].begin(), ref.bags[s][f].end());
    const auto run = ids.field_values(f);
    EXPECT_EQ(std::vector<std::uint64_t>(run.begin(), run.end()), expected);
  }
}

TEST(CtrShard, AppendOfColumnsKeepsBags) {
  const Reference ref = random_reference(30, 3);
  const CtrColumns all = columns_of(ref);
  CtrColumns joined(3);
  joined.append(all, 0, 11, 3);
  joined.append(all, 11, 19, 3);
  EXPECT_EQ(joined.values, all.values);
  EXPECT_EQ(joined.offsets, all.offsets);
  EXPECT_EQ(joined.dense, all.dense);
}

TEST(CtrShard, UnlabeledShardReadsMinusOne) {
  TempDir dir;
  Reference ref = random_reference(5, 4);
  for (auto& label : ref.labels) label = -1;
  write_ctr_shard(dir / "test.h5", small_layout(), columns_of(ref), false, "unlabeled");
  const CtrBatch batch = read_ctr_shard(dir / "test.h5");
  EXPECT_FALSE(read_ctr_shard_meta(dir / "test.h5").labeled);
  EXPECT_EQ(batch.labels, std::vector<std::int32_t>(5, -1));
}

TEST(CtrShard, LabelOtherThanZeroOrOneIsRefusedNamingTheSample) {
  TempDir dir;
  Reference ref = random_reference(5, 5);
  ref.labels[3] = 2;
  write_ctr_shard(dir / "train-00000.h5", small_layout(), columns_of(ref), true, "bad");
  expect_error([&] { read_ctr_shard(dir / "train-00000.h5"); }, ExitCode::kInputData,
               {"train-00000.h5", "label 2 of sample 3"});
}

TEST(CtrShard, ManifestCatchesAFlippedByte) {
  TempDir dir;
  const CtrColumns columns = columns_of(random_reference(50, 6));
  write_ctr_shard(dir / "train-00000.h5", small_layout(), columns, true, "a");
  write_ctr_shard(dir / "test.h5", small_layout(), columns, true, "a");
  write_data_manifest(dir.path());
  EXPECT_EQ(list_train_shards(dir.path()).size(), 1u);
  EXPECT_NO_THROW(read_ctr_shard(dir / "test.h5"));
  {
    std::fstream file(dir / "test.h5", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-20, std::ios::end);
    file.put('\x5a');
  }
  expect_error([&] { read_ctr_shard(dir / "test.h5"); }, ExitCode::kInputData, {"test.h5"});
}

// The trainer, evaluate and predict read every shard through data::read_shard and friends: a CTR shard comes back
// as Samples with its dense features, its labels and its bags (Samples::categorical), scattered rows included.
void expect_samples_match(const Samples& samples, const Reference& ref, const std::vector<std::uint64_t>& rows) {
  ASSERT_EQ(samples.labels.size(), rows.size());
  ASSERT_EQ(samples.categorical.samples, rows.size());
  ASSERT_EQ(samples.meta.sample_count, rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t s = rows[i];
    EXPECT_EQ(samples.labels[i], ref.labels[s]);
    for (std::size_t d = 0; d < 3; ++d) EXPECT_EQ(samples.features[i * 3 + d], ref.dense[s * 3 + d]);
    for (std::size_t f = 0; f < 3; ++f) {
      const auto bag = samples.categorical.bag(f, i);
      EXPECT_EQ(std::vector<std::uint64_t>(bag.begin(), bag.end()), ref.bags[s][f]) << "row " << s << " field " << f;
    }
  }
}

TEST(CtrShard, EveryShardReaderReadsACtrShardAsSamplesWithItsBags) {
  TempDir dir;
  const Reference ref = random_reference(60, 7);
  write_ctr_shard(dir / "train-00000.h5", small_layout(), columns_of(ref), true, "a");
  const ShardMeta meta = read_shard_meta(dir / "train-00000.h5");
  EXPECT_EQ(meta.sample_shape, std::vector<std::uint64_t>{3});
  EXPECT_EQ(meta.num_classes, 2u);
  EXPECT_EQ(meta.sample_count, 60u);
  ASSERT_TRUE(meta.categorical.has_value());
  EXPECT_EQ(meta.categorical->field_names, small_layout().field_names);
  EXPECT_TRUE(meta.categorical->labeled);
  std::vector<std::uint64_t> all(60);
  for (std::size_t s = 0; s < 60; ++s) all[s] = s;
  expect_samples_match(read_shard(dir / "train-00000.h5"), ref, all);
  // Runs and single rows, as dynamic dispatch asks for them.
  const std::vector<std::uint64_t> scattered{0, 1, 2, 9, 30, 31, 59};
  expect_samples_match(read_shard_rows(dir / "train-00000.h5", scattered), ref, scattered);
  expect_samples_match(read_shard_rows(dir / "train-00000.h5", {}), ref, {});
}

TEST(CtrShard, ImageShardIsNotReadAsCtr) {
  TempDir dir;
  write_shard(dir / "train-00000.h5", testing::make_samples(4));
  EXPECT_FALSE(is_ctr_shard(dir / "train-00000.h5"));
  expect_error([&] { CtrShardRows rows(dir / "train-00000.h5"); }, ExitCode::kInputData,
               {"missing attribute 'ctr_format_version'"});
}

TEST(CtrFolderWriter, TrainShardsFillUpInOrderAcrossAppends) {
  TempDir dir;
  const Reference ref = random_reference(50, 8);
  const CtrColumns columns = columns_of(ref);
  CtrFolderWriter writer(dir.path(), small_layout(), 16, "unit test");
  writer.append(Split::kTrain, columns, 0, 10);
  writer.append(Split::kTrain, columns, 10, 30);  // crosses two shard boundaries
  writer.append(Split::kValid, columns, 40, 4);
  writer.append(Split::kTest, columns, 44, 6);
  EXPECT_EQ(writer.finish(),
            (std::vector<std::string>{"train-00000.h5", "train-00001.h5", "train-00002.h5", "valid.h5", "test.h5"}));
  std::size_t first = 0;
  for (const auto& [name, count] : {std::pair{"train-00000.h5", 16},
                                    {"train-00001.h5", 16},
                                    {"train-00002.h5", 8},
                                    {"valid.h5", 4},
                                    {"test.h5", 6}}) {
    const CtrBatch batch = read_ctr_shard(dir / name);
    ASSERT_EQ(batch.samples, static_cast<std::size_t>(count)) << name;
    expect_batch_matches(batch, ref, first);
    first += batch.samples;
  }
}

TEST(CtrFolderWriter, NoTestSamplesIsAnError) {
  TempDir dir;
  CtrFolderWriter writer(dir.path(), small_layout(), 16, "only train");
  writer.append(Split::kTrain, columns_of(random_reference(5, 9)), 0, 5);
  expect_error([&] { writer.finish(); }, ExitCode::kInputData, {"only train", "no test samples"});
}

}  // namespace
}  // namespace pstrain::data::ctr
