#include "ps/table_plan.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace pstrain::ps {

TablePlan::TablePlan(std::vector<TableSpec> tables, int shards, std::size_t batch_size)
    : tables_(std::move(tables)), batch_size_(batch_size) {
  for (const TableSpec& table : tables_) row_plans_.emplace_back(table.rows, shards);
}

std::size_t TablePlan::capacity(std::size_t index, int shard) const {
  const std::uint64_t lookups = static_cast<std::uint64_t>(batch_size_) * table(index).ids_per_sample;
  return static_cast<std::size_t>(std::min(lookups, rows(index).rows_on(shard)));
}

std::size_t TablePlan::shard_size(int shard) const {
  std::size_t size = 0;
  for (std::size_t t = 0; t < tables_.size(); ++t) size += rows(t).rows_on(shard) * tables_[t].width;
  return size;
}

template <typename Copy>
void TablePlan::for_each_row(int shard, std::size_t only, Copy&& copy) const {
  std::size_t at = 0;  // in the slice
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    if (only != kEveryTable && t != only) continue;
    const std::size_t width = tables_[t].width;
    for (std::uint64_t local = 0; local < rows(t).rows_on(shard); ++local, at += width) {
      copy(at, tables_[t].offset + rows(t).global_row(shard, local) * width, width);
    }
  }
}

void TablePlan::gather(int shard, std::span<const float> full, std::span<float> slice, std::size_t only) const {
  for_each_row(shard, only, [&](std::size_t at, std::size_t in_full, std::size_t width) {
    PSTRAIN_ASSERT(in_full + width <= full.size() && at + width <= slice.size(), "row outside the vectors");
    std::memcpy(slice.data() + at, full.data() + in_full, width * sizeof(float));
  });
}

void TablePlan::scatter(int shard, std::span<const float> slice, std::span<float> full) const {
  for_each_row(shard, kEveryTable, [&](std::size_t at, std::size_t in_full, std::size_t width) {
    PSTRAIN_ASSERT(in_full + width <= full.size() && at + width <= slice.size(), "row outside the vectors");
    std::memcpy(full.data() + in_full, slice.data() + at, width * sizeof(float));
  });
}

void ModelPartition::gather(int shard, std::span<const float> full, std::span<float> slice) const {
  const std::size_t dense = blocks_.shard_size(shard);
  blocks_.gather(shard, full, slice.first(dense));
  tables_.gather(shard, full, slice.subspan(dense));
}

void ModelPartition::scatter(int shard, std::span<const float> slice, std::span<float> full) const {
  const std::size_t dense = blocks_.shard_size(shard);
  blocks_.scatter(shard, slice.first(dense), full);
  tables_.scatter(shard, slice.subspan(dense), full);
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
