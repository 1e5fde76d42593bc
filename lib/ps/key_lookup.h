#pragma once
// Trainer side of the tables keyed by the raw id (TableSpec::exact_keys): which row of its owner each id of a
// batch reads. The servers' indexes (key_index.h) lie in the key_index window (table_windows.h); a trainer reads,
// for every distinct id of every keyed table, the run of D buckets from the id's home on its owner (key_owner),
// all of them in one epoch with one MPI_Get per server, and finds the id in its run or proves it absent. Absent
// ids read their owner's default row (local row 0). No server CPU on the path; the index is quiet between a sync
// step's second meeting and the next step's first (exchange/step_protocol.h).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ps/table_plan.h"
#include "ps/table_windows.h"

namespace pstrain::ps {

// One keyed table's ids of a batch: distinct, ascending, and the global row (row_plan.h) each reads.
struct ResolvedKeys {
  std::vector<std::int64_t> ids;
  std::vector<std::uint64_t> rows;

  // The row of an id of `ids`.
  std::uint64_t row_of(std::int64_t id) const;
};

// The buckets of a keyed table's index on each server, and the run a reader fetches (at most the buckets).
std::uint64_t keyed_buckets(const TableSpec& table);
std::uint32_t keyed_probe_bound(const TableSpec& table);

// Fills every keyed table's `rows` from its `ids` (set by the caller; hashed tables' entries stay empty): one
// shared-lock epoch on the key_index window, one get per server.
void resolve_keys(const TableWindows& windows, const TablePlan& plan, std::vector<ResolvedKeys>& tables);

// Keyed table t's held ids, ascending, and their rows: every server's whole index read (one get per server).
ResolvedKeys read_held_keys(const TableWindows& windows, const TablePlan& plan, std::size_t t);

// What the servers' keyed tables hold and did, summed over the servers, per table (zeros for a hashed table),
// as of the last meeting: read one-sidedly (one get per server).
struct KeyedTableCounters {
  std::int64_t held = 0;
  std::int64_t admitted = 0;
  std::int64_t evicted = 0;
  std::int64_t refused = 0;
  std::int64_t dropped = 0;
};
std::vector<KeyedTableCounters> read_key_counters(const TableWindows& windows, const TablePlan& plan);

}  // namespace pstrain::ps
