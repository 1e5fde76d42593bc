#include "run_common/trainer_samples.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "data/pixel_bytes.h"

namespace pstrain::run_common {

TrainerSamples::TrainerSamples(data::Samples all)
    : meta_(all.meta), width_(all.meta.sample_size()), held_(std::move(all)) {
  meta_.sample_count = held_.labels.size();
  hold_as_pixels_where_possible();
}

TrainerSamples::TrainerSamples(std::vector<std::filesystem::path> shards, std::vector<std::uint64_t> counts,
                               data::ShardMeta meta)
    : meta_(std::move(meta)), width_(meta_.sample_size()), on_demand_(true), shards_(std::move(shards)) {
  PSTRAIN_ASSERT(shards_.size() == counts.size(), shards_.size(), " shards, ", counts.size(), " counts");
  first_local_.resize(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), first_local_.begin() + 1);
  meta_.sample_count = first_local_.back();
  held_.meta = meta_;
}

void TrainerSamples::hold(std::span<const std::uint32_t> locals) {
  if (!on_demand_) return;
  // (shard, row in it, local index), sorted: each shard is read once, its rows in the file's order.
  struct Place {
    std::size_t shard;
    std::uint64_t row;
    std::uint32_t local;
    bool operator<(const Place& other) const { return std::tie(shard, row) < std::tie(other.shard, other.row); }
  };
  std::vector<Place> places;
  places.reserve(locals.size());
  for (const std::uint32_t local : locals) {
    PSTRAIN_ASSERT(local < count(), "sample ", local, " of ", count());
    const auto after = std::upper_bound(first_local_.begin(), first_local_.end(), std::uint64_t{local});
    const auto shard = static_cast<std::size_t>(after - first_local_.begin() - 1);
    places.push_back({shard, local - first_local_[shard], local});
  }
  std::sort(places.begin(), places.end());
  held_.features.clear();
  held_.labels.clear();
  held_.categorical = {};
  slots_.clear();
  std::vector<std::uint64_t> rows;
  for (std::size_t begin = 0; begin < places.size();) {
    std::size_t end = begin;
    rows.clear();
    for (; end < places.size() && places[end].shard == places[begin].shard; ++end) rows.push_back(places[end].row);
    // Opened for each chunk, not kept: an open HDF5 file costs ~0.5 MiB, and a chunk of a shuffled pass may touch
    // every shard of the data set.
    const data::Samples read = data::read_shard_rows(shards_[places[begin].shard], rows);
    for (std::size_t i = begin; i < end; ++i) slots_.emplace(places[i].local, held_.labels.size() + (i - begin));
    held_.features.insert(held_.features.end(), read.features.begin(), read.features.end());
    held_.labels.insert(held_.labels.end(), read.labels.begin(), read.labels.end());
    core::append_samples(held_.categorical, read.categorical);
    begin = end;
  }
  hold_as_pixels_where_possible();
}

void TrainerSamples::hold_as_pixels_where_possible() {
  pixels_.clear();
  if (meta_.tokens || meta_.categorical) return;  // ids, or CTR's dense features: not pixels
  if (auto bytes = data::as_pixel_bytes(held_.features)) {
    pixels_ = std::move(*bytes);
    std::vector<float>().swap(held_.features);  // released: an assignment of {} would keep the capacity
  }
}

void TrainerSamples::copy_features(std::uint32_t local, std::span<float> out) const {
  PSTRAIN_ASSERT(out.size() == width_, out.size(), " floats for a sample of ", width_);
  const std::size_t first = slot(local) * width_;
  if (held_.features.empty() && width_ > 0) {
    data::pixel_bytes_to_floats(std::span<const std::uint8_t>(pixels_).subspan(first, width_), out);
  } else {
    std::copy_n(held_.features.begin() + static_cast<std::ptrdiff_t>(first), width_, out.begin());
  }
}

void TrainerSamples::gather_bags(std::span<const std::uint32_t> locals, core::JaggedIds& out) const {
  std::vector<std::uint32_t> slots(locals.size());
  for (std::size_t i = 0; i < locals.size(); ++i) slots[i] = static_cast<std::uint32_t>(slot(locals[i]));
  out = core::gather_samples(held_.categorical, slots);
}

std::size_t TrainerSamples::slot(std::uint32_t local) const {
  if (!on_demand_) return local;
  const auto found = slots_.find(local);
  PSTRAIN_ASSERT(found != slots_.end(), "sample ", local, " is not among the ", slots_.size(), " held");
  return found->second;
}

}  // namespace pstrain::run_common
