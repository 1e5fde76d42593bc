#include "ps/key_lookup.h"

#include <algorithm>
#include <limits>

#include "comm/datatype.h"
#include "comm/mpi_check.h"
#include "core/error.h"
#include "ps/keyed_rows.h"

namespace pstrain::ps {

std::uint64_t ResolvedKeys::row_of(std::int64_t id) const {
  const auto found = std::lower_bound(ids.begin(), ids.end(), id);
  PSTRAIN_ASSERT(found != ids.end() && *found == id, "id ", id, " was not resolved");
  return rows[static_cast<std::size_t>(found - ids.begin())];
}

std::uint64_t keyed_buckets(const TableSpec& table) {
  return keyed_index_buckets(static_cast<std::int64_t>(table.keys.rows_per_shard - 1));
}

std::uint32_t keyed_probe_bound(const TableSpec& table) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(table.keys.probe_bound, keyed_buckets(table)));
}

namespace {

// Where one id's run lies in the fetched buckets, and whose it is.
struct RunPlace {
  std::size_t table;
  std::size_t k;  // its index in the table's ids
};

// Every keyed table's ids by owner: the runs each server is asked for, in the order they are fetched.
std::vector<std::vector<RunPlace>> runs_by_owner(const TablePlan& plan, const std::vector<ResolvedKeys>& tables) {
  std::vector<std::vector<RunPlace>> places(static_cast<std::size_t>(plan.rows(0).shards()));
  for (std::size_t t = 0; t < plan.size(); ++t) {
    for (std::size_t k = 0; plan.table(t).exact_keys() && k < tables[t].ids.size(); ++k) {
      places[static_cast<std::size_t>(key_owner(tables[t].ids[k], plan.rows(0).shards()))].push_back({t, k});
    }
  }
  return places;
}

// The runs of `places`, owner after owner, each id's D buckets (two pieces where its run wraps): one shared-lock
// epoch on the key_index window, one MPI_Get per server.
std::vector<KeyBucket> fetch_runs(const TableWindows& windows, const TablePlan& plan,
                                  const std::vector<ResolvedKeys>& tables,
                                  const std::vector<std::vector<RunPlace>>& places) {
  std::size_t buckets_wanted = 0;
  for (const auto& shard_places : places) {
    for (const RunPlace& place : shard_places) buckets_wanted += keyed_probe_bound(plan.table(place.table));
  }
  std::vector<KeyBucket> runs(buckets_wanted);
  std::vector<comm::Datatype> types;  // alive until the epoch completes
  const MPI_Win window = windows.key_index();
  MPI_CHECK(MPI_Win_lock_all(0, window));
  std::size_t at = 0;  // bytes of `runs` filled by the gets before
  for (int shard = 0; shard < static_cast<int>(places.size()); ++shard) {
    std::vector<int> lengths;
    std::vector<MPI_Aint> bytes;
    std::size_t fetched = 0;
    for (const RunPlace& place : places[static_cast<std::size_t>(shard)]) {
      const TableSpec& table = plan.table(place.table);
      const std::uint64_t buckets = keyed_buckets(table);
      const std::uint32_t bound = keyed_probe_bound(table);
      const std::size_t first_word = windows.key_index_at(place.table, shard) + kKeyCounterWords;
      const std::uint64_t home =
          key_home(tables[place.table].ids[place.k], keyed_index_seed(table.keys.seed, place.table), buckets);
      for (const BucketPiece& piece : run_pieces(home, bound, buckets)) {
        if (piece.count == 0) continue;
        lengths.push_back(static_cast<int>(piece.count * sizeof(KeyBucket)));
        bytes.push_back(static_cast<MPI_Aint>(first_word * sizeof(std::int64_t) + piece.first * sizeof(KeyBucket)));
      }
      fetched += bound * sizeof(KeyBucket);
    }
    if (fetched == 0) continue;
    PSTRAIN_ASSERT(fetched <= static_cast<std::size_t>(std::numeric_limits<int>::max()), fetched, " bytes of runs");
    types.push_back(comm::Datatype::hindexed(lengths, bytes, MPI_BYTE));
    MPI_CHECK(MPI_Get(reinterpret_cast<char*>(runs.data()) + at, static_cast<int>(fetched), MPI_BYTE, shard, 0, 1,
                      types.back().handle(), window));
    at += fetched;
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
  return runs;
}

}  // namespace

void resolve_keys(const TableWindows& windows, const TablePlan& plan, std::vector<ResolvedKeys>& tables) {
  const std::vector<std::vector<RunPlace>> places = runs_by_owner(plan, tables);
  const std::vector<KeyBucket> runs = fetch_runs(windows, plan, tables, places);
  std::size_t run = 0;
  for (int shard = 0; shard < static_cast<int>(places.size()); ++shard) {
    for (const RunPlace& place : places[static_cast<std::size_t>(shard)]) {
      const std::uint32_t bound = keyed_probe_bound(plan.table(place.table));
      ResolvedKeys& resolved = tables[place.table];
      resolved.rows.resize(resolved.ids.size());
      const auto found = find_in_run(std::span(runs).subspan(run, bound), resolved.ids[place.k]);
      run += bound;
      // Keyed row r is local row 1 + r; local row 0 is the default row (table_plan.h KeyedSpec).
      const std::uint64_t local = found ? static_cast<std::uint64_t>(*found) + 1 : 0;
      resolved.rows[place.k] = plan.rows(place.table).global_row(shard, local);
    }
  }
}

ResolvedKeys read_held_keys(const TableWindows& windows, const TablePlan& plan, std::size_t t) {
  const TableSpec& table = plan.table(t);
  PSTRAIN_ASSERT(table.exact_keys(), "table ", table.name, " is not keyed");
  const int shards = plan.rows(t).shards();
  const std::uint64_t buckets = keyed_buckets(table);
  std::vector<KeyBucket> index(buckets * static_cast<std::uint64_t>(shards));
  const MPI_Win window = windows.key_index();
  const auto bytes = static_cast<int>(buckets * sizeof(KeyBucket));
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < shards; ++shard) {
    MPI_CHECK(MPI_Get(index.data() + static_cast<std::uint64_t>(shard) * buckets, bytes, MPI_BYTE, shard,
                      static_cast<MPI_Aint>(windows.key_index_at(t, shard) + kKeyCounterWords), bytes, MPI_BYTE,
                      window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
  std::vector<std::pair<std::int64_t, std::uint64_t>> held;  // id, global row
  for (int shard = 0; shard < shards; ++shard) {
    for (std::uint64_t b = 0; b < buckets; ++b) {
      const KeyBucket& bucket = index[static_cast<std::uint64_t>(shard) * buckets + b];
      if (bucket.row == kEmptyRow) continue;
      held.emplace_back(bucket.id, plan.rows(t).global_row(shard, static_cast<std::uint64_t>(bucket.row) + 1));
    }
  }
  std::sort(held.begin(), held.end());
  ResolvedKeys keys;
  for (const auto& [id, row] : held) {
    keys.ids.push_back(id);
    keys.rows.push_back(row);
  }
  return keys;
}

std::vector<KeyedTableCounters> read_key_counters(const TableWindows& windows, const TablePlan& plan) {
  const int shards = plan.rows(0).shards();
  std::vector<std::int64_t> words(static_cast<std::size_t>(shards) * plan.size() * kKeyCounterWords, 0);
  std::vector<comm::Datatype> types;
  const MPI_Win window = windows.key_index();
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < shards; ++shard) {
    std::vector<int> lengths;
    std::vector<MPI_Aint> bytes;
    std::vector<int> origin;
    for (std::size_t t = 0; t < plan.size(); ++t) {
      if (!plan.table(t).exact_keys()) continue;
      lengths.push_back(static_cast<int>(kKeyCounterWords));
      bytes.push_back(static_cast<MPI_Aint>(windows.key_index_at(t, shard) * sizeof(std::int64_t)));
      origin.push_back(static_cast<int>((static_cast<std::size_t>(shard) * plan.size() + t) * kKeyCounterWords));
    }
    if (lengths.empty()) continue;
    types.push_back(comm::Datatype::hindexed(lengths, bytes, MPI_INT64_T));
    std::vector<MPI_Aint> origin_bytes;
    for (const int word : origin) origin_bytes.push_back(static_cast<MPI_Aint>(word * sizeof(std::int64_t)));
    types.push_back(comm::Datatype::hindexed(lengths, origin_bytes, MPI_INT64_T));
    MPI_CHECK(MPI_Get(words.data(), 1, types.back().handle(), shard, 0, 1, types[types.size() - 2].handle(), window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
  std::vector<KeyedTableCounters> counters(plan.size());
  for (int shard = 0; shard < shards; ++shard) {
    for (std::size_t t = 0; t < plan.size(); ++t) {
      const std::int64_t* w = words.data() + (static_cast<std::size_t>(shard) * plan.size() + t) * kKeyCounterWords;
      counters[t].held += w[kRowsHeld];
      counters[t].admitted += w[kRowsAdmitted];
      counters[t].evicted += w[kRowsEvicted];
      counters[t].refused += w[kIdsRefused];
      counters[t].dropped += w[kGradientsDropped];
    }
  }
  return counters;
}

}  // namespace pstrain::ps
