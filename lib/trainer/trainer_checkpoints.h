#pragma once
// The trainer's side of checkpoints: what it contributes to one (its samples trained in the pass, the model state,
// and the whole optimizer state where it runs the optimizer itself) and when it joins one, following
// exchange/step_protocol.h: at common step boundaries in sync, all-reduce and local runs, by request (quiesce,
// save, end_async_checkpoint) in async and ssp runs.
#include <cstdint>
#include <span>

#include "comm/layout.h"
#include "exchange/gradient_exchange.h"
#include "ps/table_plan.h"
#include "run_common/checkpointing.h"
#include "run_common/model_state.h"
#include "run_common/run_schedule.h"
#include "run_common/sample_ledger.h"

namespace pstrain::trainer {

// Checkpointing for this run: none (no writer) or a writer and the partition that splits the model state among
// the ranks holding it (the server shards, or one shard: the local or all-reduce trainer).
struct CheckpointSupport {
  run_common::CheckpointWriter* writer = nullptr;
  const ps::ModelPartition* partition = nullptr;
  bool asynchronous = false;  // async/ssp: checkpoints by request and quiesce, not at common steps
};

class TrainerCheckpoints {
 public:
  // `seed`: --seed, recorded in every checkpoint.
  TrainerCheckpoints(const comm::WorldLayout& layout, std::uint64_t seed, const run_common::RunSchedule& schedule,
                     const CheckpointSupport& support, exchange::GradientExchange& exchange,
                     run_common::ModelStateAverage& model_state, const run_common::SampleLedger& ledger,
                     std::span<const float> parameters);

  bool asynchronous() const { return support_.writer != nullptr && support_.asynchronous; }
  // This rank's wishes (StepFlags) for the flags of the step that just ended (0 without checkpoints).
  int local_flags() const { return support_.writer ? support_.writer->local_flags() : 0; }

  // After step `step` of `steps` of the pass, with the flags the step agreed on: joins the checkpoint due then,
  // if any. Returns true when the run stops after it.
  bool after_step(const run_common::StepPosition& position, std::int64_t step, std::int64_t steps, int flags);
  // Async: lead trainer, before the trainers' end-of-pass barrier: asks for the end-of-pass checkpoint.
  void request_end_of_pass(std::int64_t global_step);
  // After a completed pass: the end-of-pass checkpoint (`last_step_flags` from the pass's last step in
  // sync runs). Returns the agreed flags (kStopAfterCheckpoint: the run stops), 0 without checkpoints.
  int after_pass(const run_common::StepPosition& position, int last_step_flags);
  // Async: quiesce, save and the end of the checkpoint; returns the request bits everyone acts on.
  int join_async(const run_common::StepPosition& position);

 private:
  // Collective with the servers (or the other trainers): the state after `position`.
  void save(const run_common::StepPosition& position);
  // Async: the exchange's checkpoint requests (every async exchange takes them).
  exchange::RequestedCheckpoints& requested();

  comm::WorldLayout layout_;
  std::uint64_t seed_;
  const run_common::RunSchedule& schedule_;
  CheckpointSupport support_;
  exchange::GradientExchange& exchange_;
  run_common::ModelStateAverage& model_state_;
  const run_common::SampleLedger& ledger_;
  std::span<const float> parameters_;
};

}  // namespace pstrain::trainer
