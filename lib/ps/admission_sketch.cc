#include "ps/admission_sketch.h"

#include <algorithm>

#include "core/counter_random.h"
#include "core/error.h"

namespace pstrain::ps {

AdmissionSketch::AdmissionSketch(std::uint32_t depth, std::uint64_t width, std::uint64_t seed, std::uint64_t table,
                                 std::uint64_t halve_every)
    : depth_(depth), width_(width), halve_every_(halve_every) {
  if (depth == 0 || width == 0) {
    throw Error(ExitCode::kUsage, cat("an admission sketch needs depth and width >= 1, got ", depth, " x ", width));
  }
  const std::uint64_t table_key = combine_key(seed, table);
  for (std::uint32_t r = 0; r < depth; ++r) row_keys_.push_back(combine_key(table_key, r));
  counters_.assign(static_cast<std::size_t>(depth) * width, 0);
}

std::size_t AdmissionSketch::slot(std::uint32_t row, std::int64_t id) const {
  return static_cast<std::size_t>(row) * width_ + combine_key(row_keys_[row], static_cast<std::uint64_t>(id)) % width_;
}

std::uint32_t AdmissionSketch::estimate(std::int64_t id) const {
  std::uint32_t smallest = kMaxCount;
  for (std::uint32_t r = 0; r < depth_; ++r) smallest = std::min<std::uint32_t>(smallest, counters_[slot(r, id)]);
  return smallest;
}

std::uint32_t AdmissionSketch::add(std::int64_t id) {
  // Conservative update: the estimate is the minimum, so raising a counter above minimum + 1 would only add
  // error; every counter stays >= the true count of each id hashed to it, so the estimate never undercounts.
  const std::uint32_t target = std::min(estimate(id) + 1, kMaxCount);
  for (std::uint32_t r = 0; r < depth_; ++r) {
    std::uint16_t& counter = counters_[slot(r, id)];
    counter = static_cast<std::uint16_t>(std::max<std::uint32_t>(counter, target));
  }
  if (halve_every_ > 0 && ++sightings_ == halve_every_) {
    for (std::uint16_t& counter : counters_) counter = static_cast<std::uint16_t>(counter >> 1);
    sightings_ = 0;
  }
  return target;
}

void AdmissionSketch::load(std::span<const std::uint16_t> counters, std::uint64_t sightings) {
  sightings_ = halve_every_ > 0 ? sightings % halve_every_ : 0;
  if (counters.size() != counters_.size()) {
    throw Error(ExitCode::kInputData, cat("an admission sketch of ", depth_, " x ", width_, " counters cannot load ",
                                          counters.size(), " counters"));
  }
  std::copy(counters.begin(), counters.end(), counters_.begin());
}

}  // namespace pstrain::ps
