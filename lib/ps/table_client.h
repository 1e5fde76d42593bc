#pragma once
// Trainer side of the row tables (table_plan.h): before a batch, one-sided gets of the distinct rows it looks up
// in every table, into a cache of a batch's rows per table; after the backward pass, one-sided puts of those rows'
// gradients and indices into this trainer's slots. Per step and server: three epochs (one per window of
// table_windows.h) and one MPI call in each, whatever the number of tables (indexed datatypes on both sides: no
// packing copy, no server CPU on the path). A trainer's memory for a table is one batch's rows, whatever the
// table's size, or, where it holds rows from one push to the next (hold_rows_until_push: --mode geo), the rows of
// every batch since its last push. The protocol: exchange/step_protocol.h.
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "comm/layout.h"
#include "core/jagged_ids.h"
#include "exchange/exchange_stats.h"
#include "nn/cached_lookups.h"
#include "ps/key_lookup.h"
#include "ps/row_plan.h"
#include "ps/table_plan.h"
#include "ps/table_windows.h"

namespace pstrain::ps {

struct TableTraffic {
  std::uint64_t pushes = 0;        // steps that sent row slots
  std::uint64_t rows_fetched = 0;  // summed over tables and training steps (evaluation and pass folders not counted)
  std::uint64_t rows_pushed = 0;
  std::uint64_t bytes = 0;  // row data and indices, both directions
  // Keyed tables (TableSpec::exact_keys), training steps only: lookups, and those that read a default row.
  std::uint64_t keyed_lookups = 0;
  std::uint64_t default_lookups = 0;
  double resolve_seconds = 0;  // finding the ids' rows in the servers' indexes (key_lookup.h)
};

// Where a trainer keeps a table's rows for the batch in progress: `rows` rows (the most distinct ids one batch
// can look up) at `offset` of its flat parameter vector, after the dense parameters (run_common/model_factory.h). The
// trainer never holds the table itself.
struct RowCache {
  std::size_t offset = 0;
  std::size_t rows = 0;
};

// What a batch looks up in the tables: `count` samples' features (a table of single ids reads them: count x
// ids_per_sample ids, as floats) and their categorical fields (a table of bags reads them; null for data without
// fields).
struct BatchLookups {
  std::span<float> features;
  const core::JaggedIds* categorical = nullptr;
  std::size_t count = 0;
};

class TableClient {
 public:
  TableClient(TableWindows& windows, const TablePlan& plan, std::vector<RowCache> caches,
              const comm::WorldLayout& layout);

  // From now on (--mode geo: a trainer steps alone between its meetings with the servers) the rows a batch fetches
  // stay in the caches, where the trainer updates them, until the next push(): a batch fetches only the rows not
  // held yet, and push() sends every held row (the trainer's change to it) and forgets them. The rows a batch
  // fetches also go into `first_values` at the same places of the flat vector: the values a change is measured
  // from. Call before the first fetch; `first_values` stays valid as long as this client.
  void hold_rows_until_push(std::span<float> first_values);
  // Fetches the distinct rows that the batch looks up into the tables' caches in `parameters`, rewrites each id
  // in `batch.features` as its row's place in the cache, which is what the model's embedding then reads, and
  // places a table of bags' lookups in cached_lookups() (its ids stay: other tables read the same fields).
  // Remembers the rows for push(). Throws Error(kInputData) for a single id that is not an integer inside the
  // table.
  void fetch(const BatchLookups& batch, std::span<float> parameters);
  // The same for an evaluation batch: nothing to push afterwards, and not counted as training traffic.
  void fetch_for_evaluation(const BatchLookups& batch, std::span<float> parameters);
  // Where the last fetched batch's lookups of each table of bags sit in its cache: what the model reads
  // (nn::Model::set_cached_lookups), valid until the next fetch.
  const nn::CachedLookups& cached_lookups() const { return cached_lookups_; }
  // Puts the gradients of the rows fetched last (their cache rows in the flat `gradient`; held rows: of every row
  // held) into this trainer's slots on every shard, or an empty slot where this step touched nothing, and forgets
  // them.
  void push(std::span<const float> gradient);
  // Rows [first, first + count) of table `table`, as the servers hold them now, into `out` (count x width): the
  // pass folders write whole tables a block at a time.
  // A keyed table (TableSpec::exact_keys): rows [first, first + count) in the order held_ids() last gave.
  void read_rows(std::size_t table, std::uint64_t first, std::uint64_t count, std::span<float> out);
  // A keyed table's held ids, ascending, read from every server's index (one get per server); remembered with
  // their rows for read_rows (RowTableAccess::held_ids).
  std::vector<std::int64_t> held_ids(std::size_t table);

  const TableTraffic& traffic() const { return traffic_; }
  const TablePlan& plan() const { return plan_; }
  // The servers' keyed tables' counters, summed over servers, per table (key_lookup.h), as of the last meeting.
  std::vector<KeyedTableCounters> keyed_counters() const { return read_key_counters(windows_, plan_); }

 private:
  // The rows of every table's request (built from the ids) into the tables' caches: row k of table t's request at
  // cache row places[t][k], or at cache row k where places[t] is empty.
  void get_rows(const std::vector<RowRequest>& requests, const std::vector<std::vector<std::uint32_t>>& places,
                std::span<float> parameters);
  // fetch() of a client that holds rows: fetches the batch's rows not held yet, places every lookup at its row.
  void fetch_held(const BatchLookups& batch, std::span<float> parameters);
  // push()'s requests of a client that holds rows: every held row, ordered by shard, with its cache row.
  void request_held_rows(std::vector<std::vector<std::uint32_t>>& places);
  // Where `shard`'s rows of table t's request lie in the flat vector: one block of the cache (rows in request
  // order) or, with `places`, a block per row at its cache row. Appends lengths and displacements (floats).
  void add_cache_blocks(std::size_t t, const RowRequest& request, std::span<const std::uint32_t> places, int shard,
                        std::vector<int>& lengths, std::vector<int>& at) const;
  RowRequest request_for(std::size_t t, const BatchLookups& batch, const std::vector<ResolvedKeys>& keys);
  RowRequest request_for_bags(std::size_t t, const BatchLookups& batch, const std::vector<ResolvedKeys>& keys);
  // The distinct ids of the batch's bags of every keyed table into keys[t].ids, then their rows (key_lookup.h).
  void resolve_batch_keys(const BatchLookups& batch, std::vector<ResolvedKeys>& keys);
  // Where `shard`'s rows of table t's request lie in the flat vector (floats): one run of the table's cache, since a
  // request orders its rows by shard. get_rows checks that the vector's displacements fit an int.
  int cache_run_at(std::size_t t, const RowRequest& request, int shard) const {
    return static_cast<int>(caches_[t].offset +
                            request.shard_begin[static_cast<std::size_t>(shard)] * plan_.table(t).width);
  }
  void read_keyed_rows(std::size_t t, std::uint64_t first, std::uint64_t count, std::span<float> out);
  void add_keyed_words(std::size_t t, int shard, std::span<const std::uint64_t> touched,
                       std::vector<std::int64_t>& header);
  // The requests' cache places: into the features (tables of single ids) and cached_lookups_ (tables of bags).
  void place_lookups(const std::vector<RowRequest>& requests, std::span<float> features);

  TableWindows& windows_;
  const TablePlan& plan_;
  std::vector<RowCache> caches_;
  comm::WorldLayout layout_;
  int shards_;
  std::vector<RowRequest> requests_;  // per table: the rows fetched for the step in progress
  std::vector<std::int64_t> ids_;     // scratch
  std::vector<ResolvedKeys> keys_;    // per keyed table: the training batch's ids and rows, pushed as sightings
  // per keyed table: the push in progress's row -> the id it was read for (add_keyed_words)
  std::vector<std::unordered_map<std::uint64_t, std::int64_t>> id_of_row_;
  std::vector<ResolvedKeys> key_snapshots_;  // per keyed table: its held ids and rows as held_ids() last read them
  std::uint64_t default_lookups_ = 0;        // of the last request_for_bags
  nn::CachedLookups cached_lookups_;         // per table of bags: the last batch's lookups' cache rows
  TableTraffic traffic_;
  // Held rows (hold_rows_until_push): per table, row -> its cache row, and the rows in cache order.
  bool holding_ = false;
  std::span<float> first_values_;
  std::vector<std::unordered_map<std::uint64_t, std::uint32_t>> held_;
  std::vector<std::vector<std::uint64_t>> held_rows_;
};

// What the parameter-server exchanges do before a batch (RowTableAccess::fetch_for_batch): without tables
// nothing (false); else the batch's rows fetched under the watchdog, the time added to `seconds`.
bool fetch_rows_for_batch(TableClient* tables, const BatchLookups& batch, std::span<float> parameters, double& seconds);

// Evaluation's fetch (RowTableAccess::fetch_for_evaluation) and the pass folders' reads
// (RowTableAccess::read_table_rows): without tables nothing (false), else under the watchdog.
bool fetch_rows_for_evaluation(TableClient* tables, const BatchLookups& batch, std::span<float> parameters);
bool read_table_rows(TableClient* tables, std::size_t table, std::uint64_t first, std::uint64_t count,
                     std::span<float> out);
std::vector<std::int64_t> read_held_ids(TableClient* tables, std::size_t table);
// The servers' keyed tables' counters summed over tables (zeros without keyed tables), under the watchdog.
exchange::KeyedRowCounts read_keyed_row_counts(TableClient* tables);

}  // namespace pstrain::ps
