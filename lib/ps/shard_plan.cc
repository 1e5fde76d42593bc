#include "ps/shard_plan.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace pstrain::ps {

ShardPlan::ShardPlan(const std::vector<std::size_t>& parameter_sizes, int shards, std::size_t block_size,
                     const std::vector<bool>& by_rows)
    : shard_sizes_(static_cast<std::size_t>(std::max(shards, 0)), 0),
      segments_(static_cast<std::size_t>(std::max(shards, 0))) {
  PSTRAIN_ASSERT(shards >= 1, "shards = ", shards);
  PSTRAIN_ASSERT(block_size >= 1, "block_size = ", block_size);
  PSTRAIN_ASSERT(by_rows.empty() || by_rows.size() == parameter_sizes.size(), by_rows.size(), " marks for ",
                 parameter_sizes.size(), " parameters");
  std::size_t offset = 0;
  for (std::size_t parameter = 0; parameter < parameter_sizes.size(); ++parameter) {
    const std::size_t size = parameter_sizes[parameter];
    if (!by_rows.empty() && by_rows[parameter]) {  // a row table: served by rows (table_plan.h)
      offset += size;
      continue;
    }
    for (std::size_t start = 0; start < size; start += block_size) {
      const std::size_t length = std::min(block_size, size - start);
      const auto lightest = std::min_element(shard_sizes_.begin(), shard_sizes_.end());
      const auto shard = static_cast<std::size_t>(lightest - shard_sizes_.begin());
      blocks_.push_back({static_cast<int>(shard), {offset + start, shard_sizes_[shard], length}});
      auto& owned = segments_[shard];
      if (!owned.empty() && owned.back().global_offset + owned.back().length == offset + start) {
        owned.back().length += length;  // adjacent to its previous block: one segment, one MPI block
      } else {
        owned.push_back({offset + start, shard_sizes_[shard], length});
      }
      shard_sizes_[shard] += length;
      largest_block_ = std::max(largest_block_, length);
    }
    offset += size;
  }
  total_size_ = offset;
}

void ShardPlan::gather(int shard, std::span<const float> full, std::span<float> slice) const {
  PSTRAIN_ASSERT(full.size() == total_size_ && slice.size() >= shard_size(shard), full.size(), " ", slice.size());
  for (const Segment& segment : segments(shard)) {
    std::memcpy(slice.data() + segment.local_offset, full.data() + segment.global_offset,
                segment.length * sizeof(float));
  }
}

void ShardPlan::scatter(int shard, std::span<const float> slice, std::span<float> full) const {
  PSTRAIN_ASSERT(full.size() == total_size_ && slice.size() >= shard_size(shard), full.size(), " ", slice.size());
  for (const Segment& segment : segments(shard)) {
    std::memcpy(full.data() + segment.global_offset, slice.data() + segment.local_offset,
                segment.length * sizeof(float));
  }
}

std::vector<exchange::FlatRange> ShardPlan::block_ranges() const {
  std::vector<exchange::FlatRange> ranges;
  for (const Block& block : blocks_) ranges.push_back({block.place.global_offset, block.place.length});
  return ranges;
}

}  // namespace pstrain::ps
