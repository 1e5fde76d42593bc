#pragma once
// How the rows of a sparse table (an embedding table updated row by row) are dealt to the parameter-server
// shards, and which rows one step asks each shard for. Row r lives on shard r mod P at local index r / P.
// Dealing by modulo keeps the shards within one row of each other for any table size, and spreads the frequent
// ids (the low ids of a vocabulary sorted by frequency) over every shard, so that no shard serves most lookups.
// The dense parameters keep their own plan (shard_plan.h); a table never enters it.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pstrain::ps {

class RowPlan {
 public:
  // Throws pstrain::Error(kUsage) for shards < 1.
  RowPlan(std::uint64_t rows, int shards);

  std::uint64_t rows() const { return rows_; }
  int shards() const { return shards_; }
  int owner(std::uint64_t row) const { return static_cast<int>(row % static_cast<std::uint64_t>(shards_)); }
  std::uint64_t local_index(std::uint64_t row) const { return row / static_cast<std::uint64_t>(shards_); }
  std::uint64_t global_row(int shard, std::uint64_t local) const {
    return local * static_cast<std::uint64_t>(shards_) + static_cast<std::uint64_t>(shard);
  }
  std::uint64_t rows_on(int shard) const;

 private:
  std::uint64_t rows_;
  int shards_;
};

// One step's lookups in one table: the distinct ids, ordered by (owning shard, local index) so that each shard's
// rows are one contiguous, increasing run, and for every lookup the position of its id among them.
struct RowRequest {
  std::vector<std::uint64_t> rows;       // distinct ids, by (owner, local index)
  std::vector<std::uint32_t> slot;       // lookup k reads rows[slot[k]]
  std::vector<std::size_t> shard_begin;  // shard s owns rows[shard_begin[s], shard_begin[s + 1])

  std::span<const std::uint64_t> rows_of(int shard) const {
    const auto s = static_cast<std::size_t>(shard);
    return std::span(rows).subspan(shard_begin[s], shard_begin[s + 1] - shard_begin[s]);
  }
};

// Throws pstrain::Error(kInputData) naming the first id outside [0, plan.rows()).
RowRequest make_row_request(std::span<const std::int64_t> ids, const RowPlan& plan);

}  // namespace pstrain::ps
