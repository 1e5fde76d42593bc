#pragma once
// The interface every exchange mode implements: how a trainer's gradient becomes the parameters of its next step.
// Every mode's exchange (lib/modes: local training, the parameter-server modes sync, async, ssp and geo,
// and all-reduce) is a small object behind it; the trainer loop never asks which one it has. What every mode does is
// the step below; what only some modes can do is a capability (row tables, communication behind computation, a sum in
// place, checkpoints by request, updates of touched table rows only, an optimizer of their own), which an exchange
// that has it returns and every other returns null. Who waits for whom in each mode: lib/exchange/step_protocol.h.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/jagged_ids.h"
#include "exchange/exchange_stats.h"
#include "nn/cached_lookups.h"
#include "nn/parameter_stream.h"
#include "nn/touched_rows.h"
#include "optim/optimizer.h"

namespace pstrain::exchange {

// Where a step stands in its pass: step `step` (from 0, counted from where this run entered the pass) of `steps`
// (-1 where the trainer does not know them ahead: dynamic dispatch). A mode whose ranks do not meet after every
// step meets where its cadence says (exchange/meeting_cadence.h).
struct StepPlace {
  std::int64_t step = 0;
  std::int64_t steps = -1;
};

// Modes whose servers hold row tables by rows (ps/table_plan.h).
class RowTableAccess {
 public:
  virtual ~RowTableAccess() = default;
  // Before a training batch of `count` samples (`features`, as the model reads them, and `categorical`, its
  // fields, null for data without): fetches the rows the batch looks up into the tables' caches in `parameters`,
  // rewrites the batch's single ids as places in those caches and says where its bags' lookups sit
  // (cached_lookups). Returns whether `parameters` changed (the caller then hands them to the model).
  virtual bool fetch_for_batch(std::span<float> features, const core::JaggedIds* categorical, std::size_t count,
                               std::span<float> parameters) = 0;
  // The same before an evaluation batch (the lead trainer, at the end of a pass).
  virtual bool fetch_for_evaluation(std::span<float> features, const core::JaggedIds* categorical, std::size_t count,
                                    std::span<float> parameters) = 0;
  // Where the last fetched batch's bag lookups sit in the caches, for nn::Model::set_cached_lookups.
  virtual const nn::CachedLookups& cached_lookups() const = 0;
  // Rows [first, first + count) of row table `table` (ps::TablePlan order) into `out`, as the servers hold them
  // (the pass folders write whole tables a block at a time).
  virtual void read_table_rows(std::size_t table, std::uint64_t first, std::uint64_t count, std::span<float> out) = 0;
  // A table keyed by the raw id (ps::TableSpec::exact_keys): the ids the servers hold rows for now, ascending.
  // Until the next call for it, read_table_rows reads that table in the pass folder's order: row 0 the default
  // row, row k + 1 the row of ids[k].
  virtual std::vector<std::int64_t> held_ids(std::size_t table) = 0;
  // The servers' keyed tables' counters (all zero without keyed tables).
  virtual KeyedRowCounts keyed_row_counts() = 0;
};

// Communication behind computation (nn/parameter_stream.h): a mode that can send the gradient while the backward
// pass runs and receive the next parameters while the forward pass runs.
class ComputationOverlap {
 public:
  virtual ~ComputationOverlap() = default;
  // The stream the model should report to, working in place on the model's host buffers `gradient` and
  // `parameters`; null where this run cannot stream after all. Called once, before the first step, and only for a
  // model that can report (nn::Model::can_stream_parameters): an exchange that returned a stream relies on its
  // reports.
  virtual nn::ParameterStream* stream_in_place(std::span<const float> gradient, std::span<float> parameters) = 0;
};

// Modes that combine gradients where the model keeps them (all-reduce: NCCL in GPU memory, MPI_Allreduce in host
// memory).
class InPlaceCombination {
 public:
  virtual ~InPlaceCombination() = default;
  // After the backward pass and before the trainer reads the gradient out of the model: afterwards the model's
  // gradient buffer holds the average over all trainers, which the trainer then passes to step() even if it had no
  // samples itself (count 0: its stale buffer counts for nothing). Agrees on `flags` like step(). Returns false
  // (and does nothing) where this run combines in step() after all.
  virtual bool combine_in_place(std::size_t count, int& flags) = 0;
};

// Modes without a common step boundary (async, ssp): checkpoints go by request (exchange/step_protocol.h).
class RequestedCheckpoints {
 public:
  virtual ~RequestedCheckpoints() = default;
  // Posts this trainer's wish (StepFlags, 0 for none) and returns the request standing for everyone (0: none).
  virtual int checkpoint_request(int wish) = 0;
  // Waits until every push of ours is applied and counts ourselves in.
  virtual void quiesce() = 0;
  // Run by finish_pass when a checkpoint is requested while this trainer waits for the others to end the pass (a
  // trainer still stepping asked for it and will not come to the meeting until it is written). The handler returns
  // true when the checkpoint was a stop: the requester will not come, so finish_pass gives up.
  virtual void set_checkpoint_handler(std::function<bool()> handler) = 0;
};

// Modes that can update only the rows of the model's row tables that a step touched (local training, where the
// optimizer leaves an element with a zero gradient as it is: optim::Optimizer::zero_gradient_keeps_parameters).
// The trainer asks the model to keep its table gradients sparse (nn::Model::keep_table_gradients_sparse) and, if
// it does, names each step's touched rows before step(); a step it names nothing for is a whole step.
class TouchedRowUpdates {
 public:
  virtual ~TouchedRowUpdates() = default;
  // For the next step() only. The spans stay valid until then.
  virtual void rows_touched(std::vector<nn::TouchedRows> tables) = 0;
};

class GradientExchange {
 public:
  virtual ~GradientExchange() = default;
  // Fills `parameters` with the starting parameters (after the job's start barrier).
  virtual void start(std::span<float> parameters) = 0;
  // Before the computation of every training step (count: the step's samples, 0 for none), streaming or not,
  // after every other MPI call of the step: until step() the trainer's only MPI calls are its stream's, made from
  // the model's reports during the computation.
  virtual void begin_step(std::size_t count) { static_cast<void>(count); }
  // `gradient` is d(mean loss)/d(parameters) over `count` samples; on return `parameters` holds what to compute
  // the next step on. count may be 0 (a trainer with no samples left in a sync step still takes part).
  // `flags` (StepFlags) go in with this rank's wishes and come out agreed where the ranks meet after this step
  // (sync: OR over every rank; local: unchanged); async, and a step after which nobody meets (`place` and the
  // mode's cadence), leave them untouched.
  virtual void step(std::span<const float> gradient, std::size_t count, const StepPlace& place,
                    std::span<float> parameters, int& flags) = 0;
  // After step(), on this trainer alone: waits until `parameters` holds every update of the step. A streamed sync
  // step returns with blocks still landing, which the next forward pass waits for block by block; an evaluation
  // between two steps (--eval-every-steps) reads them all first. Other modes return with the step's parameters.
  virtual void settle_parameters() {}
  // Collective over the trainers: afterwards every trainer holds the same parameters, including every update of
  // the pass.
  virtual void finish_pass(std::span<float> parameters) = 0;
  // Training is over (servers may stop).
  virtual void finish() = 0;

  // The capabilities this exchange has (null: none).
  virtual RowTableAccess* row_tables() { return nullptr; }
  virtual ComputationOverlap* overlap() { return nullptr; }
  virtual InPlaceCombination* in_place_combination() { return nullptr; }
  virtual RequestedCheckpoints* requested_checkpoints() { return nullptr; }
  virtual TouchedRowUpdates* touched_row_updates() { return nullptr; }
  // The optimizer this exchange runs on the trainer's whole model (local and all-reduce training), whose state a
  // checkpoint must hold.
  virtual optim::Optimizer* own_optimizer() { return nullptr; }

  ExchangeTimers& timers() { return timers_; }
  StalenessStats& staleness() { return staleness_; }
  // ssp: how many steps this trainer was ahead of the slowest one when it went on (never more than s).
  StalenessStats& clock_lead() { return clock_lead_; }
  // Reset with the timers at the start of a pass.
  KeyedLookupCounts& keyed_lookups() { return keyed_lookups_; }

 protected:
  ExchangeTimers timers_;
  KeyedLookupCounts keyed_lookups_;
  StalenessStats staleness_;
  StalenessStats clock_lead_;
};

}  // namespace pstrain::exchange
