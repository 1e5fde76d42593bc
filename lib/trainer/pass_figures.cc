#include "trainer/pass_figures.h"

#include <algorithm>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"

namespace pstrain::trainer {

namespace {

// The exchange's share of the pass's figures.
void take_exchange_figures(PassTotals& totals, exchange::GradientExchange& exchange) {
  const exchange::ExchangeTimers& timers = exchange.timers();
  totals.push_seconds = timers.push_seconds;
  totals.sync_seconds = timers.sync_seconds;
  totals.pull_seconds = timers.pull_seconds;
  totals.gate_seconds = timers.gate_seconds;
  totals.allreduce_seconds = timers.allreduce_seconds;
  totals.update_seconds = timers.update_seconds;
  totals.lead_count = static_cast<double>(exchange.clock_lead().count);
  totals.lead_sum = static_cast<double>(exchange.clock_lead().sum);
  totals.keyed_lookups = exchange.keyed_lookups().lookups;
  totals.default_row_lookups = exchange.keyed_lookups().on_default_row;
  totals.keyed_resolve_seconds = exchange.keyed_lookups().resolve_seconds;
}

}  // namespace

PassFigures agree_on_pass(PassTotals totals, double pass_seconds, std::int64_t steps,
                          exchange::GradientExchange& exchange, MPI_Comm trainers) {
  totals.steps = static_cast<double>(steps);
  take_exchange_figures(totals, exchange);
  const double my_lead_max = static_cast<double>(exchange.clock_lead().max);
  const comm::Watchdog::Wait wait("the end-of-pass agreement of the trainers");
  PassFigures agreed;
  constexpr int kFields = sizeof(PassTotals) / sizeof(double);
  MPI_CHECK(MPI_Reduce(&totals, &agreed.sum, kFields, MPI_DOUBLE, MPI_SUM, 0, trainers));
  MPI_CHECK(MPI_Reduce(&pass_seconds, &agreed.pass_seconds, 1, MPI_DOUBLE, MPI_MAX, 0, trainers));
  MPI_CHECK(MPI_Reduce(&my_lead_max, &agreed.lead_max, 1, MPI_DOUBLE, MPI_MAX, 0, trainers));
  const exchange::StalenessStats& mine = exchange.staleness();
  exchange::StalenessStats& staleness = agreed.staleness;
  MPI_CHECK(MPI_Reduce(mine.histogram.data(), staleness.histogram.data(), exchange::StalenessStats::kBuckets,
                       MPI_INT64_T, MPI_SUM, 0, trainers));
  MPI_CHECK(MPI_Reduce(&mine.count, &staleness.count, 1, MPI_INT64_T, MPI_SUM, 0, trainers));
  MPI_CHECK(MPI_Reduce(&mine.sum, &staleness.sum, 1, MPI_INT64_T, MPI_SUM, 0, trainers));
  MPI_CHECK(MPI_Reduce(&mine.max, &staleness.max, 1, MPI_INT64_T, MPI_MAX, 0, trainers));
  return agreed;
}

}  // namespace pstrain::trainer
