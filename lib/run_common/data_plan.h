#pragma once
// Which samples each trainer reads, and in which order. Computed identically on every rank from the shards'
// metadata, so servers know the number of sync steps without reading any sample.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "data/shard.h"

namespace pstrain::run_common {

struct DataPlan {
  std::vector<std::filesystem::path> train_shards;
  std::filesystem::path test_shard;
  std::optional<std::filesystem::path> valid_shard;  // valid.h5 where the data has one (token shards)
  data::ShardMeta meta;  // of the test shard: shape and classes shared by all; CTR data: its categorical
                         // max_bag the longest bag of each field in any shard (which bounds a batch's lookups)
  std::vector<std::vector<std::size_t>> trainer_shards;  // trainer t reads the shards whose index is t mod T
  std::vector<std::uint64_t> trainer_samples;
  std::vector<std::uint64_t> shard_samples;  // samples in each training shard

  std::uint64_t total_train_samples() const;  // each sample once, however many trainers may read it
};

// Reads the metadata of every shard; throws pstrain::Error(kInputData) when shards disagree on sample shape or
// classes, or (kUsage) when there are fewer shards than trainers.
// With `every_trainer_reads_all` (dynamic dispatch) each trainer's shard list is every shard.
DataPlan plan_data(const std::filesystem::path& data_dir, int trainers, bool every_trainer_reads_all = false);

// CTR data (ShardMeta::categorical): the share of clicks among all training samples, each counted once, whatever
// the trainers: normalized entropy's baseline (report/ctr_metrics.h). Reads the training shards' labels.
double training_click_rate(const DataPlan& plan);

// The order in which a trainer visits its `count` samples in `pass`: a permutation drawn from (seed, pass,
// trainer) with our own Fisher-Yates over mt19937_64 (identical on every platform), or 0..count-1 without
// shuffling.
std::vector<std::uint32_t> pass_order(std::size_t count, std::uint64_t seed, int pass, int trainer, bool shuffle);

}  // namespace pstrain::run_common
