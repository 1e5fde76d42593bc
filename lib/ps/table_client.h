#pragma once
// Trainer side of the row tables (table_plan.h): before a batch, one-sided gets of the distinct rows it looks up,
// one MPI_Get per shard (an indexed datatype at the server, no server CPU on the path), into a cache of a batch's
// rows; after the backward pass, one-sided puts of those rows' gradients and indices into this trainer's slots.
// A trainer's memory for a table is one batch's rows, whatever the table's size. The memory on the servers is in
// windows.h, the protocol in exchange/step_protocol.h.
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
  std::uint64_t rows_fetched = 0;  // summed over tables and training steps (evaluation and pass folders not counted)
  std::uint64_t rows_pushed = 0;
  std::uint64_t bytes = 0;  // row data and indices, both directions
};

// Where a trainer keeps a table's rows for the batch in progress: `rows` rows (the most distinct ids one batch
// can look up) at `offset` of its flat parameter vector, after the dense parameters (run/model_factory.h). The
// trainer never holds the table itself.
struct RowCache {
  std::size_t offset = 0;
  std::size_t rows = 0;
};

class TableClient {
 public:
  TableClient(std::vector<TableWindows>& windows, const TablePlan& plan, std::vector<RowCache> caches,
              const comm::WorldLayout& layout);

  // Fetches the distinct rows that `count` samples look up (`features`: count x ids_per_sample ids, as floats)
  // into the tables' caches in `parameters`, and rewrites each id in `features` as its row's place in the cache,
  // which is what the model's embedding then reads. Remembers the rows for push(). Throws Error(kInputData) for
  // an id that is not an integer inside the table.
  void fetch(std::span<float> features, std::size_t count, std::span<float> parameters);
  // The same for an evaluation batch: nothing to push afterwards, and not counted as training traffic.
  void fetch_for_evaluation(std::span<float> features, std::size_t count, std::span<float> parameters);
  // Puts the gradients of the rows fetched last (their cache rows in the flat `gradient`) into this trainer's
  // slots on every shard, or an empty slot where this step touched nothing, and forgets them.
  void push(std::span<const float> gradient);
  // Rows [first, first + count) of table `table`, as the servers hold them now, into `out` (count x width): the
  // pass folders write whole tables a block at a time.
  void read_rows(std::size_t table, std::uint64_t first, std::uint64_t count, std::span<float> out);

  const TableTraffic& traffic() const { return traffic_; }

 private:
  // The rows of `request` (built from the ids) into table `t`'s cache.
  void get_rows(std::size_t t, const RowRequest& request, std::span<float> parameters);
  RowRequest request_for(std::size_t t, std::span<float> features, std::size_t count);

  std::vector<TableWindows>& windows_;
  const TablePlan& plan_;
  std::vector<RowCache> caches_;
  comm::WorldLayout layout_;
  std::vector<RowRequest> requests_;  // per table: the rows fetched for the step in progress
  std::vector<std::int64_t> ids_;     // scratch
  TableTraffic traffic_;
};

// What the parameter-server exchanges do before a batch (RowTableAccess::fetch_for_batch): without tables
// nothing (false); else the batch's rows fetched under the watchdog, the time added to `seconds`.
bool fetch_rows_for_batch(TableClient* tables, std::span<float> features, std::size_t count,
                          std::span<float> parameters, double& seconds);

// Evaluation's fetch (RowTableAccess::fetch_for_evaluation) and the pass folders' reads
// (RowTableAccess::read_table_rows): without tables nothing (false), else under the watchdog.
bool fetch_rows_for_evaluation(TableClient* tables, std::span<float> features, std::size_t count,
                               std::span<float> parameters);
bool read_table_rows(TableClient* tables, std::size_t table, std::uint64_t first, std::uint64_t count,
                     std::span<float> out);

}  // namespace pstrain::ps
