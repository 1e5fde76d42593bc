#include "ps/table_plan.h"

#include <algorithm>

#include "core/error.h"

namespace pstrain::ps {

TablePlan::TablePlan(std::vector<TableSpec> tables, int shards, std::size_t batch_size)
    : tables_(std::move(tables)), batch_size_(batch_size) {
  for (const TableSpec& table : tables_) row_plans_.emplace_back(table.server_rows(shards), shards);
}

bool TablePlan::any_exact_keys() const {
  return std::any_of(tables_.begin(), tables_.end(), [](const TableSpec& table) { return table.exact_keys(); });
}

std::size_t TablePlan::capacity(std::size_t index, int shard) const {
  const std::uint64_t lookups = static_cast<std::uint64_t>(batch_size_) * table(index).ids_per_sample;
  return static_cast<std::size_t>(std::min(lookups, rows(index).rows_on(shard)));
}

std::size_t TablePlan::floats_before(std::size_t offset) const {
  std::size_t floats = 0;
  for (const TableSpec& table : tables_) {
    if (table.offset < offset) floats += static_cast<std::size_t>(table.rows) * table.width;
  }
  return floats;
}

void ModelPartition::gather_dense(int shard, std::span<const float> dense, std::span<float> slice) const {
  for (const Segment& segment : blocks_.segments(shard)) {
    const std::size_t at = segment.global_offset - tables_.floats_before(segment.global_offset);
    std::copy_n(dense.begin() + static_cast<std::ptrdiff_t>(at), segment.length,
                slice.begin() + static_cast<std::ptrdiff_t>(segment.local_offset));
  }
}

void ModelPartition::scatter_dense(int shard, std::span<const float> slice, std::span<float> dense) const {
  for (const Segment& segment : blocks_.segments(shard)) {
    const std::size_t at = segment.global_offset - tables_.floats_before(segment.global_offset);
    std::copy_n(slice.begin() + static_cast<std::ptrdiff_t>(segment.local_offset), segment.length,
                dense.begin() + static_cast<std::ptrdiff_t>(at));
  }
}

}  // namespace pstrain::ps
