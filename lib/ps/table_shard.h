#pragma once
// Server side of one row table (table_plan.h): this shard's rows in their window, and the row optimizer that
// updates the rows a step touched (optim/row_optimizer.h). The memory is in windows.h, the protocol in
// exchange/step_protocol.h.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/layout.h"
#include "optim/row_optimizer.h"
#include "ps/table_plan.h"
#include "ps/windows.h"

namespace pstrain::ps {

struct TableSlice {
  std::vector<float> rows;
  std::vector<std::pair<std::string, std::vector<float>>> state;
};

class TableShard {
 public:
  // `initial` holds this shard's rows of the table (local order). Call before the job's start barrier.
  TableShard(TableWindows& windows, const TablePlan& plan, std::size_t table, const comm::WorldLayout& layout,
             std::unique_ptr<optim::RowOptimizer> optimizer, std::span<const float> initial);

  // One row update from the trainers' slots: the rows of every trainer with a nonzero weight, summed in trainer
  // order with those weights (sync: each trainer's share of the step's samples, after the step's first meeting;
  // async: 1 for the trainer whose push is applied, 0 for the others). The same expressions in the same order
  // as the dense sum (server.cc), so with SGD a table updated by rows and one updated densely get the same bits.
  void update(std::span<const float> weights);

  // This shard's rows and the row optimizer's state vectors for them (named as the dense optimizer's), in local
  // row order: what it writes to a checkpoint's row file (checkpoint/table_rows.h).
  TableSlice export_rows();
  // Sets them back (`state` in the order of state_names()).
  void import_rows(std::span<const float> rows, const std::vector<std::vector<float>>& state, std::uint64_t steps);
  std::vector<std::string> state_names();

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
