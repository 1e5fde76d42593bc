#pragma once
// Which ranges of the flat vector (a sync shard's blocks, an all-reduce's buckets) the backward pass of a step
// has finished, from the parts a model reports as final (nn/parameter_stream.h): a range may be reported in parts
// (a dense layer's rows), and is whole once every element of it was reported. Shared by the streams that send a
// range as soon as it is whole.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/error.h"

namespace pstrain::exchange {

struct FlatRange {
  std::size_t offset = 0;
  std::size_t length = 0;
};

class RangeProgress {
 public:
  // `ranges`: in increasing offset, not overlapping.
  explicit RangeProgress(std::vector<FlatRange> ranges) : ranges_(std::move(ranges)), reported_(ranges_.size(), 0) {}

  // A new step: nothing reported.
  void reset() { std::ranges::fill(reported_, 0); }
  std::size_t size() const { return ranges_.size(); }
  const FlatRange& range(std::size_t index) const { return ranges_[index]; }

  // The ranges [first, last) that overlap [offset, offset + size).
  std::pair<std::size_t, std::size_t> ranges_in(std::size_t offset, std::size_t size) const {
    const auto first = std::partition_point(ranges_.begin(), ranges_.end(), [offset](const FlatRange& range) {
      return range.offset + range.length <= offset;
    });
    const auto last = std::partition_point(first, ranges_.end(), [end = offset + size](const FlatRange& range) {
      return range.offset < end;
    });
    return {static_cast<std::size_t>(first - ranges_.begin()), static_cast<std::size_t>(last - ranges_.begin())};
  }

  // Records [offset, offset + size) as final and calls `whole(index)` for each range this made whole.
  template <typename OnWhole>
  void report(std::size_t offset, std::size_t size, OnWhole&& whole) {
    const auto [first, last] = ranges_in(offset, size);
    for (std::size_t index = first; index < last; ++index) {
      const FlatRange& range = ranges_[index];
      const std::size_t from = std::max(offset, range.offset);
      const std::size_t to = std::min(offset + size, range.offset + range.length);
      reported_[index] += to - from;
      PSTRAIN_ASSERT(reported_[index] <= range.length, "range ", index, " reported twice in one step");
      if (reported_[index] == range.length) whole(index);
    }
  }

 private:
  std::vector<FlatRange> ranges_;
  std::vector<std::size_t> reported_;  // floats of each range reported this step
};

}  // namespace pstrain::exchange
