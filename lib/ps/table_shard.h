#pragma once
// Server side of one row table (table_plan.h): this shard's rows in the tables' window, and the row optimizer that
// updates the rows a step touched (optim/row_optimizer.h). The memory is in table_windows.h, the protocol in
// exchange/step_protocol.h.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/layout.h"
#include "optim/row_optimizer.h"
#include "ps/keyed_rows.h"
#include "ps/table_plan.h"
#include "ps/table_windows.h"

namespace pstrain::ps {

// A keyed table's state on one server, as checkpoints move it: the held rows in id order (an entry's `row` is its
// place in `rows` and in each state vector), their values and optimizer state, the admission sketch, the counters.
struct KeyedShardState {
  std::vector<KeyedEntry> entries;
  // For a resume on the same servers (KeyedRows::restore_exactly): each entry's row on its server, and the
  // server's index as it was. Empty index: the entries are re-dealt and re-inserted (KeyedRows::restore).
  std::vector<std::int64_t> held_rows;
  std::vector<KeyBucket> index;
  std::vector<float> rows;                                        // entries x width
  std::vector<std::pair<std::string, std::vector<float>>> state;  // entries x (width or 1), named as the optimizer's
  std::vector<std::uint16_t> sketch;
  KeyedRowsCounters counters;
};

class TableShard {
 public:
  // Starts with the window's zero rows: fill_rows() sets the starting values. Call before the job's start barrier.
  TableShard(TableWindows& windows, const TablePlan& plan, std::size_t table, const comm::WorldLayout& layout,
             std::unique_ptr<optim::RowOptimizer> optimizer);

  // Runs fill(rows) on this shard's rows (local order) under the window's exclusive lock.
  void fill_rows(const std::function<void(std::span<float>)>& fill);

  // One row update from the trainers' slots: the rows of every trainer with a nonzero weight, summed in trainer
  // order with those weights (sync: each trainer's share of the step's samples, after the step's first meeting;
  // async: 1 for the trainer whose push is applied, 0 for the others). The same expressions in the same order
  // as the dense sum (server.cc), so with SGD a table updated by rows and one updated densely get the same bits.
  void update(std::span<const float> weights);
  // A keyed table's meeting at `step` (TableSpec::exact_keys; nothing for a hashed one), after update(): every
  // trainer's sightings (its slots' ids, in trainer order) go to KeyedRows::meet, which refreshes recency, admits
  // and evicts; admitted rows get their first values and a fresh optimizer state, freed rows zeros; the counters
  // in the key window are rewritten. The default row (local row 0) is never updated.
  void meet(std::int64_t step);
  // An async push's meeting: `trainer`'s sightings alone, at the server's update count `step`.
  void meet_one(std::int64_t step, int trainer);
  const KeyedRows* keyed_rows() const { return keyed_.get(); }
  // The row optimizer's state vectors' names ("sum", "m", ...), as checkpoints name them.
  std::vector<std::string> state_names() const;
  // A keyed table's checkpoint state, copied out under the windows' shared locks.
  KeyedShardState keyed_state() const;
  // Sets it back: `state.entries` sorted by id, at most the cap (ps::deal_entries), each `row` its place in
  // `state.rows`; the rows go where KeyedRows::restore puts their ids, every other row is zeroed; then the
  // optimizer's step count.
  void restore_keyed(const KeyedShardState& state, std::uint64_t steps);

  // Runs use(rows, the row optimizer's state vectors for them, named as the dense optimizer's) under the window's
  // shared lock: a checkpoint writes them to a row file of its own (checkpoint/table_rows.h), no copy made.
  using RowsVisitor =
      std::function<void(std::span<const float>, const std::vector<std::pair<std::string, std::span<const float>>>&)>;
  void visit_rows(const RowsVisitor& use);
  // Sets them back in place: load(rows, the state vectors by name) under the window's exclusive lock, then the
  // optimizer's step count.
  using RowsLoader =
      std::function<void(std::span<float>, const std::vector<std::pair<std::string, std::span<float>>>&)>;
  void load_rows(const RowsLoader& load, std::uint64_t steps);

  std::uint64_t rows_updated() const { return rows_updated_; }

 private:
  TableWindows& windows_;
  const TablePlan& plan_;
  std::size_t table_;
  comm::WorldLayout layout_;
  std::size_t width_;
  std::size_t capacity_;
  std::unique_ptr<optim::RowOptimizer> optimizer_;
  std::vector<std::int32_t> position_;  // local row -> its place in touched_ this step, -1 if untouched
  std::vector<std::uint32_t> touched_;  // local rows touched this step, in the order first seen
  std::vector<float> summed_;           // their summed gradients
  std::uint64_t rows_updated_ = 0;
  void publish_counters();
  void meet_trainers(std::int64_t step, int first, int last);

  std::unique_ptr<KeyedRows> keyed_;  // exact keys: its row k is local row 1 + k
  std::vector<std::int64_t> sightings_;
  std::uint64_t rows_dropped_ = 0;  // gradients of rows given to another id between a trainer's read and push
};

}  // namespace pstrain::ps
