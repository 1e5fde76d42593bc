#pragma once
// Trainer side of the row tables (table_plan.h): before a batch, one-sided gets of the rows it looks up, one
// MPI_Get per shard with an indexed datatype on both sides (no server CPU on the path); after the backward pass,
// one-sided puts of those rows' gradients and indices into this trainer's slots. The trainer keeps the tables in
// its flat parameter vector; only the rows fetched for a batch are current there (the forward pass reads no
// other). The memory is in windows.h, the protocol in exchange/step_protocol.h.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "comm/layout.h"
#include "ps/row_plan.h"
#include "ps/table_plan.h"
#include "ps/windows.h"

namespace pstrain::ps {

struct TableTraffic {
  std::uint64_t pushes = 0;        // steps that sent row slots
  std::uint64_t rows_fetched = 0;  // summed over tables and steps (training batches; fetch_all not counted)
  std::uint64_t rows_pushed = 0;
  std::uint64_t bytes = 0;  // row data and indices, both directions
};

class TableClient {
 public:
  TableClient(std::vector<TableWindows>& windows, const TablePlan& plan, const comm::WorldLayout& layout);

  // Fetches the rows that `count` samples look up (`features`: count x ids_per_sample ids, as floats) into their
  // places in `parameters` (the flat vector), and remembers them for push(). Throws Error(kInputData) for an id
  // that is not an integer inside the table.
  void fetch(std::span<const float> features, std::size_t count, std::span<float> parameters);
  // Puts the gradients of the rows fetched last (their places in the flat `gradient`) into this trainer's slots on
  // every shard, or an empty slot where this step touched nothing, and forgets them.
  void push(std::span<const float> gradient);
  // Every row of every table into `parameters` (the end of a pass: evaluation and pass folders read them all).
  void fetch_all(std::span<float> parameters);

  const TableTraffic& traffic() const { return traffic_; }

 private:
  std::vector<TableWindows>& windows_;
  const TablePlan& plan_;
  comm::WorldLayout layout_;
  std::vector<RowRequest> requests_;  // per table: the rows fetched for the step in progress
  std::vector<std::int64_t> ids_;     // scratch
  TableTraffic traffic_;
};

// What the parameter-server exchanges do before a batch (GradientExchange::fetch_for_batch): without tables
// nothing (false); else the batch's rows fetched under the watchdog, the time added to `seconds`.
bool fetch_rows_for_batch(TableClient* tables, std::span<const float> features, std::size_t count,
                          std::span<float> parameters, double& seconds);

}  // namespace pstrain::ps
