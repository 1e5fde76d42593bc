#include "ps/table_windows.h"

#include <algorithm>

#include "core/error.h"
#include "ps/keyed_rows.h"

namespace pstrain::ps {

namespace {

std::size_t rows_floats(const TablePlan& plan, std::size_t t, int shard) {
  return plan.rows(t).rows_on(shard) * plan.table(t).width;
}
std::size_t slot_ids(const TablePlan& plan, std::size_t t, int shard) {
  // A keyed table's rows carry their ids (an async server drops a row given to another id since the read), then
  // the step's sightings.
  const std::size_t keyed = plan.table(t).exact_keys() ? plan.capacity(t, shard) + 1 + plan.key_capacity(t) : 0;
  return 1 + plan.capacity(t, shard) + keyed;
}
std::size_t slot_grads(const TablePlan& plan, std::size_t t, int shard) {
  return plan.capacity(t, shard) * plan.table(t).width;
}

std::size_t key_words(const TablePlan& plan, std::size_t t, int) {
  const TableSpec& table = plan.table(t);
  if (!table.exact_keys()) return 0;
  const auto capacity = static_cast<std::int64_t>(table.keys.rows_per_shard - 1);
  return kKeyCounterWords + kWordsPerBucket * keyed_index_buckets(capacity);
}

}  // namespace

std::vector<std::size_t> TableWindows::offsets(const TablePlan& plan,
                                               std::size_t (*size)(const TablePlan&, std::size_t, int)) {
  std::vector<std::size_t> result;
  const int shards = plan.empty() ? 0 : plan.rows(0).shards();
  for (int shard = 0; shard < shards; ++shard) {
    std::size_t offset = 0;
    for (std::size_t t = 0; t < plan.size(); ++t) {
      result.push_back(offset);
      offset += size(plan, t, shard);
    }
    result.push_back(offset);
  }
  return result;
}

TableWindows::TableWindows(MPI_Comm world, const comm::WorldLayout& layout, const TablePlan& plan)
    : tables_(plan.size()), shard_(layout.is_server() ? layout.shard_index : -1) {
  if (plan.empty()) return;
  rows_offset_ = offsets(plan, rows_floats);
  ids_offset_ = offsets(plan, slot_ids);
  grads_offset_ = offsets(plan, slot_grads);
  keys_offset_ = offsets(plan, key_words);
  const bool server = shard_ >= 0;
  const auto trainers = static_cast<std::size_t>(layout.trainers);
  rows_ = comm::Window<float>(world, server ? at(rows_offset_, tables_, shard_) : 0);
  row_ids_ = comm::Window<std::int64_t>(world, server ? trainers * at(ids_offset_, tables_, shard_) : 0);
  row_grads_ = comm::Window<float>(world, server ? trainers * at(grads_offset_, tables_, shard_) : 0);
  if (plan.any_exact_keys())
    key_index_ = comm::Window<std::int64_t>(world, server ? at(keys_offset_, tables_, shard_) : 0);
  if (!server) return;
  const comm::WindowLock rows_lock(rows_.handle(), layout.world_rank, comm::WindowLock::Mode::kExclusive);
  std::ranges::fill(rows_.local(), 0.0f);
  const comm::WindowLock ids_lock(row_ids_.handle(), layout.world_rank, comm::WindowLock::Mode::kExclusive);
  std::ranges::fill(row_ids_.local(), 0);
}

std::size_t TableWindows::slot_ids_at(std::size_t t, int trainer, int shard) const {
  return static_cast<std::size_t>(trainer) * at(ids_offset_, tables_, shard) + at(ids_offset_, t, shard);
}

std::size_t TableWindows::slot_grads_at(std::size_t t, int trainer, int shard) const {
  return static_cast<std::size_t>(trainer) * at(grads_offset_, tables_, shard) + at(grads_offset_, t, shard);
}

std::span<float> TableWindows::local_rows(std::size_t t) const {
  PSTRAIN_ASSERT(shard_ >= 0, "a trainer holds no table rows");
  return rows_.local().subspan(rows_at(t, shard_), at(rows_offset_, t + 1, shard_) - rows_at(t, shard_));
}

std::span<const std::int64_t> TableWindows::local_slot_ids(std::size_t t, int trainer) const {
  PSTRAIN_ASSERT(shard_ >= 0, "a trainer holds no row slots");
  return row_ids_.local().subspan(slot_ids_at(t, trainer, shard_),
                                  at(ids_offset_, t + 1, shard_) - at(ids_offset_, t, shard_));
}

std::span<std::int64_t> TableWindows::local_key_counters(std::size_t t) const {
  PSTRAIN_ASSERT(shard_ >= 0, "a trainer holds no key index");
  return key_index_.local().subspan(key_index_at(t, shard_), kKeyCounterWords);
}

std::span<KeyBucket> TableWindows::local_key_index(std::size_t t) const {
  PSTRAIN_ASSERT(shard_ >= 0, "a trainer holds no key index");
  const std::size_t first = key_index_at(t, shard_) + kKeyCounterWords;
  const std::size_t words = at(keys_offset_, t + 1, shard_) - first;
  // The window's int64 words hold KeyBuckets of two words each (key_index.h's layout, read remotely as words).
  return {reinterpret_cast<KeyBucket*>(key_index_.local().data() + first), words / kWordsPerBucket};
}

std::span<const float> TableWindows::local_slot_grads(std::size_t t, int trainer) const {
  PSTRAIN_ASSERT(shard_ >= 0, "a trainer holds no row slots");
  return row_grads_.local().subspan(slot_grads_at(t, trainer, shard_),
                                    at(grads_offset_, t + 1, shard_) - at(grads_offset_, t, shard_));
}

}  // namespace pstrain::ps
