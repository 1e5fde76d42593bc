#include "ps/row_plan.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace pstrain::ps {

RowPlan::RowPlan(std::uint64_t rows, int shards) : rows_(rows), shards_(shards) {
  if (shards < 1) throw Error(ExitCode::kUsage, cat("a sparse table needs at least one server shard, got ", shards));
}

std::uint64_t RowPlan::rows_on(int shard) const {
  const auto s = static_cast<std::uint64_t>(shard);
  const auto p = static_cast<std::uint64_t>(shards_);
  return s < rows_ ? (rows_ - s + p - 1) / p : 0;
}

RowRequest make_row_request(std::span<const std::int64_t> ids, const RowPlan& plan) {
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (ids[k] < 0 || static_cast<std::uint64_t>(ids[k]) >= plan.rows()) {
      throw Error(ExitCode::kInputData,
                  cat("id ", ids[k], " (lookup ", k, " of the batch) is outside the table of ", plan.rows(), " rows"));
    }
  }
  // (owner, local index) order is (id mod P, id div P): sort the lookups by that key, then keep the first of each id.
  const auto key = [&](std::int64_t id) {
    const auto row = static_cast<std::uint64_t>(id);
    return std::pair(plan.owner(row), plan.local_index(row));
  };
  std::vector<std::uint32_t> order(ids.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return key(ids[a]) < key(ids[b]); });

  RowRequest request;
  request.slot.resize(ids.size());
  request.shard_begin.assign(static_cast<std::size_t>(plan.shards()) + 1, 0);
  for (const std::uint32_t k : order) {
    const auto row = static_cast<std::uint64_t>(ids[k]);
    if (request.rows.empty() || request.rows.back() != row) {
      request.rows.push_back(row);
      ++request.shard_begin[static_cast<std::size_t>(plan.owner(row)) + 1];
    }
    request.slot[k] = static_cast<std::uint32_t>(request.rows.size() - 1);
  }
  std::partial_sum(request.shard_begin.begin(), request.shard_begin.end(), request.shard_begin.begin());
  return request;
}

}  // namespace pstrain::ps
