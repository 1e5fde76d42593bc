#include "run_common/trainer_samples.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <bit>
#include <filesystem>
#include <numeric>
#include <string>

#include "core/error.h"

namespace pstrain::run_common {
namespace {

namespace fs = std::filesystem;

std::vector<float> features_of(const TrainerSamples& samples, std::uint32_t local) {
  std::vector<float> features(samples.meta().sample_size());
  samples.copy_features(local, features);
  return features;
}

std::uint32_t bits(float value) {
  return std::bit_cast<std::uint32_t>(value);
}

// Two shards of 5 and 3 samples of 2 features: sample s of the concatenation has features {10 s, 10 s + 1} and
// label s % 4.
class TrainerSamplesOfTwoShards : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pstrain-trainer-samples-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::uint32_t next = 0;
    for (const std::size_t count : {5u, 3u}) {
      data::Samples shard;
      shard.meta.dataset = "unit-test";
      shard.meta.source = "test_trainer_samples";
      shard.meta.sample_shape = {2};
      shard.meta.num_classes = 4;
      shard.meta.sample_count = count;
      for (std::size_t i = 0; i < count; ++i, ++next) {
        shard.features.push_back(10.0f * static_cast<float>(next));
        shard.features.push_back(10.0f * static_cast<float>(next) + 1);
        shard.labels.push_back(static_cast<std::int32_t>(next % 4));
      }
      meta_ = shard.meta;
      paths_.push_back(dir_ / ("train-0000" + std::to_string(paths_.size()) + ".h5"));
      data::write_shard(paths_.back(), shard);
      all_.features.insert(all_.features.end(), shard.features.begin(), shard.features.end());
      all_.labels.insert(all_.labels.end(), shard.labels.begin(), shard.labels.end());
    }
    all_.meta = meta_;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::vector<fs::path> paths_;
  data::ShardMeta meta_;
  data::Samples all_;
};

TEST_F(TrainerSamplesOfTwoShards, OnDemandHoldsOnlyTheChunkGivenAndReadsWhatMemoryHolds) {
  TrainerSamples in_memory(all_);
  TrainerSamples on_demand(paths_, {5, 3}, meta_);
  EXPECT_EQ(on_demand.count(), 8u);
  EXPECT_EQ(on_demand.held(), 0u);
  const std::vector<std::uint32_t> chunk = {6, 1, 4, 7};  // across both shards, out of order
  on_demand.hold(chunk);
  EXPECT_EQ(on_demand.held(), chunk.size());
  for (const std::uint32_t local : chunk) {
    EXPECT_EQ(features_of(on_demand, local)[0], 10.0f * static_cast<float>(local));
    EXPECT_EQ(features_of(on_demand, local)[1], features_of(in_memory, local)[1]);
    EXPECT_EQ(on_demand.label(local), in_memory.label(local));
  }
  const std::vector<std::uint32_t> next = {0, 5};
  on_demand.hold(next);  // the chunk before is let go
  EXPECT_EQ(on_demand.held(), 2u);
  EXPECT_EQ(features_of(on_demand, 5)[0], 50.0f);
  EXPECT_THROW(features_of(on_demand, 6), Error);
}

TEST_F(TrainerSamplesOfTwoShards, InMemoryHoldsEverySample) {
  TrainerSamples in_memory(all_);
  EXPECT_EQ(in_memory.count(), 8u);
  EXPECT_EQ(in_memory.held(), 8u);
  const std::vector<std::uint32_t> chunk = {3};
  in_memory.hold(chunk);
  EXPECT_EQ(in_memory.held(), 8u);
  EXPECT_EQ(features_of(in_memory, 7)[0], 70.0f);
  EXPECT_EQ(in_memory.label(7), 3);
}

TEST_F(TrainerSamplesOfTwoShards, FeaturesThatAreNotPixelValuesAreHeldAsFloats) {
  const TrainerSamples in_memory(all_);
  EXPECT_EQ(in_memory.feature_bytes(), 8u * 2u * sizeof(float));
}

// Images as pstrain-data writes them (pixel k as static_cast<float>(k) / 255.0f, data/idx.cc): held as one byte per
// feature, in memory and on demand, and given back with the bits the shard holds.
TEST_F(TrainerSamplesOfTwoShards, ImagesAreHeldAsPixelBytesAndGiveBackTheShardsFloats) {
  data::Samples images = all_;
  std::vector<fs::path> paths;
  for (std::size_t i = 0; i < images.features.size(); ++i) {
    images.features[i] = static_cast<float>((i * 37 + 11) % 256) / 255.0f;  // idx.cc's arithmetic
  }
  for (std::size_t shard = 0, first = 0; shard < 2; ++shard) {
    data::Samples part;
    part.meta = meta_;
    part.meta.sample_count = shard == 0 ? 5 : 3;
    part.features.assign(images.features.begin() + static_cast<std::ptrdiff_t>(first * 2),
                         images.features.begin() + static_cast<std::ptrdiff_t>((first + part.meta.sample_count) * 2));
    part.labels.assign(images.labels.begin() + static_cast<std::ptrdiff_t>(first),
                       images.labels.begin() + static_cast<std::ptrdiff_t>(first + part.meta.sample_count));
    paths.push_back(dir_ / ("image-" + std::to_string(shard) + ".h5"));
    data::write_shard(paths.back(), part);
    first += part.meta.sample_count;
  }
  const TrainerSamples in_memory(images);
  EXPECT_EQ(in_memory.feature_bytes(), 8u * 2u);
  TrainerSamples on_demand(paths, {5, 3}, meta_);
  const std::vector<std::uint32_t> chunk = {7, 0, 3};
  on_demand.hold(chunk);
  EXPECT_EQ(on_demand.feature_bytes(), 3u * 2u);
  for (std::uint32_t local = 0; local < 8; ++local) {
    for (std::size_t f = 0; f < 2; ++f) {
      EXPECT_EQ(bits(features_of(in_memory, local)[f]), bits(images.features[local * 2 + f])) << local << " " << f;
    }
  }
  for (const std::uint32_t local : chunk) {
    EXPECT_EQ(features_of(on_demand, local), features_of(in_memory, local)) << local;
  }
}

}  // namespace
}  // namespace pstrain::run_common
