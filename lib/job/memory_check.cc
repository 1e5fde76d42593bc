#include "job/memory_check.h"

#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <sstream>

#include "comm/mpi_check.h"
#include "core/error.h"
#include "optim/optimizer.h"
#include "optim/row_optimizer.h"
#include "ps/keyed_rows.h"
#include "run_common/model_factory.h"
#include "run_common/table_layout.h"

namespace pstrain::job {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(3);
  out << bytes / kGiB << " GiB";
  return out.str();
}

// MemAvailable of /proc/meminfo in bytes; none where it cannot be read (then nothing is checked).
std::optional<double> available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  return std::nullopt;
}

// A keyed table's map on one server beside its rows (ps/keyed_rows.h): the index's buckets (16 B, at most half
// full), each row's recency and counts (KeyedRows::bytes: about 48 B a row and 16 B of free-list and meeting
// lists) and the admission sketch (2 B a counter), besides one batch's sightings per trainer slot.
double keyed_map_bytes(const ps::TableSpec& table) {
  const auto capacity = static_cast<std::int64_t>(table.keys.rows_per_shard - 1);
  const ps::KeyedRowsLayout layout = ps::keyed_rows_layout(capacity, table.keys.probe_bound);
  return static_cast<double>(ps::keyed_index_buckets(capacity) * sizeof(ps::KeyBucket)) +
         64.0 * static_cast<double>(capacity) +
         static_cast<double>(layout.sketch_depth) * static_cast<double>(layout.sketch_width) * 2.0;
}

// A server's share of row table t: its rows and their optimizer state, the trainers' row slots, and a keyed
// table's map.
MemoryNeed table_need(const run_common::JobContext& job, const ps::TablePlan& tables, std::size_t t) {
  const auto& table = tables.table(t);
  const std::size_t rows_here = tables.rows(t).rows_on(job.layout.shard_index);
  const double rows = static_cast<double>(rows_here);
  const double slots = job.layout.trainers * static_cast<double>(tables.capacity(t, job.layout.shard_index));
  double state_floats = 0;  // the row optimizer's, per element or per row: as its state for one row says
  const auto one_row = optim::make_row_optimizer(job.config.optimizer, 1, table.width);
  for (const auto& entry : one_row->state()) state_floats += rows * static_cast<double>(entry.second->size());
  MemoryNeed need;
  need.bytes = (rows * table.width + state_floats) * sizeof(float) + slots * (table.width * sizeof(float) + 8);
  std::ostringstream arithmetic;
  arithmetic << "table " << table.name << ": " << tables.rows(t).rows() << " rows / " << job.layout.pservers
             << " servers = " << rows_here << " rows x " << table.width << " floats x 4 B, its optimizer's "
             << static_cast<std::uint64_t>(state_floats) << " floats, plus row slots";
  if (table.exact_keys()) {  // the map counts against the memory as the rows do
    const double map = keyed_map_bytes(table);
    need.bytes += map;
    arithmetic << ", plus its key index and bookkeeping, " << gib(map);
  }
  need.arithmetic = arithmetic.str();
  return need;
}

}  // namespace

MemoryNeed memory_need(const run_common::JobContext& job, const ps::TablePlan& tables) {
  const double floats = static_cast<double>(job.model.parameter_count);
  const double states = static_cast<double>(optim::make_optimizer(job.config.optimizer, 0)->state().size());
  std::ostringstream arithmetic;
  MemoryNeed need;
  if (job.layout.is_trainer()) {  // parameters and gradients of its model: row tables cut to their caches
    const std::size_t trainer_floats =
        run_common::trainer_model_plan(job, run_common::largest_batch(job.config, job.model)).parameter_count;
    need.bytes = 2 * static_cast<double>(trainer_floats) * sizeof(float);
    arithmetic << "a trainer: 2 x " << trainer_floats << " floats (parameters, gradients"
               << (tables.empty() ? "" : "; the row tables as caches of the rows a trainer holds at once") << ") x 4 B";
  } else {
    double table_floats = 0;
    for (std::size_t t = 0; t < tables.size(); ++t) {
      table_floats += static_cast<double>(tables.rows(t).rows()) * static_cast<double>(tables.table(t).width);
    }
    const double dense = (floats - table_floats) / job.layout.pservers;  // its dense blocks, about
    const double dense_slots = job.layout.push_slots();                  // one per push group (comm/push_groups.h)
    // The starting values are drawn for the dense parameters whole (server/server_start.h), the tables' rows in
    // place: a server never holds a whole table.
    need.bytes = (floats - table_floats) * sizeof(float) + dense * (1 + states + dense_slots) * sizeof(float);
    arithmetic << "a server: the starting dense parameters, " << static_cast<std::uint64_t>(floats - table_floats)
               << " floats, and its dense share x (1 + " << states << " optimizer state + " << job.layout.push_slots()
               << (job.layout.aggregates_pushes() ? " node" : " trainer") << " slots), x 4 B";
    // Two tables spelled out, the rest summed: a CTR model has tens, and the message must stay readable.
    constexpr std::size_t kTablesSpelledOut = 2;
    double rest = 0;
    for (std::size_t t = 0; t < tables.size(); ++t) {
      const MemoryNeed table = table_need(job, tables, t);
      need.bytes += table.bytes;
      if (t < kTablesSpelledOut) {
        arithmetic << "; " << table.arithmetic;
      } else {
        rest += table.bytes;
      }
    }
    if (tables.size() > kTablesSpelledOut) {
      arithmetic << "; " << tables.size() - kTablesSpelledOut << " more tables, " << gib(rest);
    }
  }
  arithmetic << " = " << gib(need.bytes);
  need.arithmetic = arithmetic.str();
  return need;
}

std::optional<comm::Failure> check_node_memory(const run_common::JobContext& job, const ps::TablePlan& tables,
                                               MPI_Comm node) {
  const MemoryNeed mine = memory_need(job, tables);
  double total = 0;
  double largest = 0;
  MPI_CHECK(MPI_Allreduce(&mine.bytes, &total, 1, MPI_DOUBLE, MPI_SUM, node));
  MPI_CHECK(MPI_Allreduce(&mine.bytes, &largest, 1, MPI_DOUBLE, MPI_MAX, node));
  const std::optional<double> available = available_bytes();
  if (!available || total <= *available) return std::nullopt;
  // Every rank of the node fails; the one with the largest need explains (agree_on_failure prints the lowest
  // failing rank's message, so all carry the same numbers).
  return comm::
      Failure{static_cast<int>(ExitCode::kUsage),
              cat("the model does not fit this node: its ", job.layout.local_size, " ranks need ", gib(total), ", ",
                  gib(*available), " is available (this rank: ", mine.arithmetic,
                  "); spread the row tables over more servers (--num-pservers) or nodes, or shrink the model")};
}

double peak_resident_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux: KiB
}

}  // namespace pstrain::job
