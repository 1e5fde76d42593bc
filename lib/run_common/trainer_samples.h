#pragma once
// A trainer's training samples, by local index (its shards concatenated in index order, as the sample ledger
// numbers them). Static shards: every one of them in memory, read once. Dynamic dispatch: every shard is the
// trainer's to read, but it holds only the chunk it was given last (hold), read from the shards when it gets it:
// at 28 trainers, holding all of them cost each trainer the whole data set (388 MiB resident at 60,000
// Fashion-MNIST images; issue 31).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <unordered_map>
#include <vector>

#include "data/shard.h"

namespace pstrain::run_common {

class TrainerSamples {
 public:
  TrainerSamples() = default;
  // Every sample in memory; local index = place in `all`.
  explicit TrainerSamples(data::Samples all);
  // None in memory until hold(): `shards` hold `counts` samples each, of the shape `meta` says.
  TrainerSamples(std::vector<std::filesystem::path> shards, std::vector<std::uint64_t> counts, data::ShardMeta meta);

  // Shape and classes; sample_count is every sample, held or not.
  const data::ShardMeta& meta() const { return meta_; }
  std::size_t count() const { return meta_.sample_count; }
  // Makes samples `locals` readable (read from the shards, in place of what was held before); in memory: nothing to
  // do. Throws pstrain::Error(kInputData) for a shard that fails its checks.
  void hold(std::span<const std::uint32_t> locals);
  // Samples held in memory now.
  std::size_t held() const { return held_.labels.size(); }

  // A held sample's features into `out` (sample_size floats). Images are held as their pixel bytes where the
  // shards hold pixel / 255 (data/pixel_bytes.h): a quarter of the memory, the same floats.
  void copy_features(std::uint32_t local, std::span<float> out) const;
  std::int32_t label(std::uint32_t local) const { return held_.labels[slot(local)]; }
  // CTR samples (ShardMeta::categorical): the bags of held samples `locals`, in that order, into `out`.
  void gather_bags(std::span<const std::uint32_t> locals, core::JaggedIds& out) const;
  // Bytes of memory that features hold now (capacity, not size: what the process keeps).
  std::size_t feature_bytes() const { return held_.features.capacity() * sizeof(float) + pixels_.capacity(); }

 private:
  std::size_t slot(std::uint32_t local) const;
  // Moves held_.features into pixels_ when they are all pixel values.
  void hold_as_pixels_where_possible();

  data::ShardMeta meta_;
  std::size_t width_ = 0;
  data::Samples held_;
  std::vector<std::uint8_t> pixels_;  // the held features as pixel bytes (then held_.features is empty)
  bool on_demand_ = false;
  std::vector<std::filesystem::path> shards_;  // on demand: the shards, and where each one's samples start
  std::vector<std::uint64_t> first_local_;
  std::unordered_map<std::uint32_t, std::size_t> slots_;  // on demand: local index -> place in held_
};

}  // namespace pstrain::run_common
