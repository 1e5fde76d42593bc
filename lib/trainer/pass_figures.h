#pragma once
// The numbers a pass reports: what one trainer measured (PassTotals), and what the trainers agree on at the end
// of the pass (sums over trainers, the slowest trainer's time, the merged staleness), for metrics.jsonl and
// TensorBoard.
#include <mpi.h>

#include <algorithm>
#include <cstdint>

#include "exchange/gradient_exchange.h"
#include "optim/optimizer.h"

namespace pstrain::trainer {

// Per-pass numbers one trainer measured; summed over trainers at the end of the pass. Only doubles: the
// agreement reduces it as an array.
struct PassTotals {
  double loss_sum = 0;
  double samples = 0;
  double correct = 0;
  double compute_seconds = 0;
  double push_seconds = 0;
  double sync_seconds = 0;
  double pull_seconds = 0;
  double gate_seconds = 0;  // ssp
  double allreduce_seconds = 0;
  double update_seconds = 0;  // allreduce: the trainer's optimizer
  double copy_seconds = 0;    // device <-> host copies of gradients and parameters (GPU trainers)
  double steps = 0;
  double lead_count = 0;  // ssp: clock leads recorded, their sum and (reduced separately) their maximum
  double lead_sum = 0;
  double keyed_lookups = 0;  // tables keyed by the raw id: lookups, and those on a default row
  double default_row_lookups = 0;
  double keyed_resolve_seconds = 0;

  double train_loss() const { return loss_sum / std::max(samples, 1.0); }
  double train_accuracy() const { return correct / std::max(samples, 1.0); }
};

// The pass as the trainers agree on it; complete on the lead trainer only.
struct PassFigures {
  PassTotals sum;
  double pass_seconds = 0;  // the slowest trainer's
  double lead_max = 0;      // ssp: the largest clock lead
  exchange::StalenessStats staleness;
};

// Collective over `trainers`: this trainer's `totals` (its step count and the exchange's timers and clock leads
// filled in here) reduced onto the lead trainer.
PassFigures agree_on_pass(PassTotals totals, double pass_seconds, std::int64_t steps,
                          exchange::GradientExchange& exchange, MPI_Comm trainers);

}  // namespace pstrain::trainer
