#pragma once
// One plan, two sides: computed identically on every rank from the model's parameter sizes, it says which shard
// owns which element range of the flat parameter vector. Servers and trainers both read it; nothing is negotiated
// at run time.
//
// Each parameter is cut into blocks of at most block_size elements (a small parameter is one block). Blocks are
// dealt, in order, to the shard holding the fewest bytes so far (ties to the lowest shard), so any two shards
// differ by at most one block. A shard stores its blocks contiguously, in increasing global offset.
// Parameters marked `by_rows` (row tables that the servers hold row by row, table_plan.h) keep their place in the
// flat vector but are in no shard's blocks.
#include <cstddef>
#include <span>
#include <vector>

#include "exchange/range_progress.h"

namespace pstrain::ps {

struct Segment {
  std::size_t global_offset = 0;  // into the flat vector
  std::size_t local_offset = 0;   // into the shard's slice
  std::size_t length = 0;
};

// One block as dealt: the unit in which a sync step streams gradients to a shard and parameters back.
struct Block {
  int shard = 0;
  Segment place;
};

class ShardPlan {
 public:
  ShardPlan(const std::vector<std::size_t>& parameter_sizes, int shards, std::size_t block_size,
            const std::vector<bool>& by_rows = {});

  int shards() const { return static_cast<int>(segments_.size()); }
  // The length of the flat vector, tables included.
  std::size_t total_size() const { return total_size_; }
  std::size_t shard_size(int shard) const { return shard_sizes_.at(shard); }
  std::size_t largest_block() const { return largest_block_; }
  const std::vector<Segment>& segments(int shard) const { return segments_.at(shard); }
  // Every block, in increasing global offset (a shard's segments are its blocks, adjacent ones merged).
  const std::vector<Block>& blocks() const { return blocks_; }
  // The same blocks as ranges of the flat vector, for tracking which the backward pass has finished.
  std::vector<exchange::FlatRange> block_ranges() const;

  // Copies shard `shard`'s elements between the full vector and its slice.
  void gather(int shard, std::span<const float> full, std::span<float> slice) const;
  void scatter(int shard, std::span<const float> slice, std::span<float> full) const;

 private:
  std::size_t total_size_ = 0;
  std::size_t largest_block_ = 0;
  std::vector<std::size_t> shard_sizes_;
  std::vector<std::vector<Segment>> segments_;
  std::vector<Block> blocks_;
};

}  // namespace pstrain::ps
