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
#include "ps/table_plan.h"
#include "ps/table_windows.h"

namespace pstrain::ps {

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
};

}  // namespace pstrain::ps
