// TableClient's parts for tables keyed by the raw id (TableSpec::exact_keys, ps/key_lookup.h): a batch's ids
// resolved to rows, the ids that go with a push, and the held ids and rows a pass folder reads.
#include <algorithm>
#include <unordered_map>

#include "comm/datatype.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "ps/keyed_rows.h"
#include "ps/table_client.h"

namespace pstrain::ps {

void TableClient::resolve_batch_keys(const BatchLookups& batch, std::vector<ResolvedKeys>& keys) {
  keys.assign(plan_.size(), {});
  if (!plan_.any_exact_keys()) return;
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    const TableSpec& table = plan_.table(t);
    if (!table.exact_keys() || batch.categorical == nullptr) continue;
    std::vector<std::int64_t>& ids = keys[t].ids;
    for (const std::size_t field : table.fields) {
      for (std::size_t sample = 0; sample < batch.count; ++sample) {
        for (const std::uint64_t id : batch.categorical->bag(field, sample))
          ids.push_back(static_cast<std::int64_t>(id));
      }
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  resolve_keys(windows_, plan_, keys);
}

// A keyed table's words after its rows' indices on `shard` (table_windows.h): the id each row was read for (the
// default row: none, kEmptyRow), then the sightings: how many, and the distinct ids of the step's batch it owns,
// ascending.
void TableClient::add_keyed_words(std::size_t t, int shard, std::span<const std::uint64_t> touched,
                                  std::vector<std::int64_t>& header) {
  if (!touched.empty()) {
    // Built once per table and push, not once per server: every server's rows are among the batch's keys.
    id_of_row_.resize(plan_.size());
    std::unordered_map<std::uint64_t, std::int64_t>& id_of_row = id_of_row_[t];
    if (id_of_row.empty()) {
      const ResolvedKeys& keys = keys_.at(t);
      for (std::size_t k = 0; k < keys.ids.size(); ++k) id_of_row.emplace(keys.rows[k], keys.ids[k]);
    }
    for (const std::uint64_t row : touched) {
      header.push_back(plan_.rows(t).local_index(row) == 0 ? kEmptyRow : id_of_row.at(row));
    }
  }
  const std::size_t count_at = header.size();
  header.push_back(0);
  if (t >= keys_.size()) return;  // no batch this step
  for (const std::int64_t id : keys_[t].ids) {
    if (key_owner(id, shards_) == shard) header.push_back(id);
  }
  header[count_at] = static_cast<std::int64_t>(header.size() - count_at - 1);
  PSTRAIN_ASSERT(static_cast<std::size_t>(header[count_at]) <= plan_.key_capacity(t), header[count_at],
                 " sightings of table ", plan_.table(t).name, " for a slot of ", plan_.key_capacity(t));
  traffic_.bytes += static_cast<std::uint64_t>(header[count_at]) * sizeof(std::int64_t);
}

std::vector<std::int64_t> TableClient::held_ids(std::size_t t) {
  key_snapshots_.resize(plan_.size());
  key_snapshots_[t] = read_held_keys(windows_, plan_, t);
  return key_snapshots_[t].ids;
}

// Rows [first, first + count) of keyed table t in held_ids()'s order (row 0 the default row: zeros), one get per
// server, each row to its place in `out`.
void TableClient::read_keyed_rows(std::size_t t, std::uint64_t first, std::uint64_t count, std::span<float> out) {
  const TableSpec& table = plan_.table(t);
  PSTRAIN_ASSERT(t < key_snapshots_.size() && first + count <= key_snapshots_[t].rows.size() + 1, "rows ", first, "+",
                 count, " of keyed table ", table.name, " without held_ids() first");
  std::vector<std::vector<int>> origin(static_cast<std::size_t>(shards_));
  std::vector<std::vector<MPI_Aint>> target(static_cast<std::size_t>(shards_));
  for (std::uint64_t r = first; r < first + count; ++r) {
    float* place = out.data() + (r - first) * table.width;
    if (r == 0) {
      std::fill_n(place, table.width, 0.0f);
      continue;
    }
    const std::uint64_t row = key_snapshots_[t].rows[r - 1];
    const auto shard = static_cast<std::size_t>(plan_.rows(t).owner(row));
    origin[shard].push_back(static_cast<int>((r - first) * table.width));
    target[shard].push_back(static_cast<MPI_Aint>(
        (windows_.rows_at(t, static_cast<int>(shard)) + plan_.rows(t).local_index(row) * table.width) * sizeof(float)));
  }
  std::vector<comm::Datatype> types;
  const MPI_Win window = windows_.rows();
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < shards_; ++shard) {
    const auto s = static_cast<std::size_t>(shard);
    if (origin[s].empty()) continue;
    types.push_back(comm::Datatype::indexed_block_floats(static_cast<int>(table.width), origin[s]));
    types.push_back(comm::Datatype::hindexed(std::vector<int>(target[s].size(), static_cast<int>(table.width)),
                                             target[s], MPI_FLOAT));
    MPI_CHECK(MPI_Get(out.data(), 1, types[types.size() - 2].handle(), shard, 0, 1, types.back().handle(), window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
}

std::vector<std::int64_t> read_held_ids(TableClient* tables, std::size_t table) {
  if (tables == nullptr) return {};
  const comm::Watchdog::Wait wait("reading a keyed table's ids from the servers for the pass folder");
  return tables->held_ids(table);
}

exchange::KeyedRowCounts read_keyed_row_counts(TableClient* tables) {
  exchange::KeyedRowCounts sum;
  if (tables == nullptr || !tables->plan().any_exact_keys()) return sum;
  const comm::Watchdog::Wait wait("reading the keyed tables' counters from the servers");
  for (const KeyedTableCounters& table : tables->keyed_counters()) {
    sum.held += table.held;
    sum.admitted += table.admitted;
    sum.evicted += table.evicted;
    sum.refused += table.refused;
    sum.dropped += table.dropped;
  }
  return sum;
}

}  // namespace pstrain::ps
