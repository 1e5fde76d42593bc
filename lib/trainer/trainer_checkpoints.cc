#include "trainer/trainer_checkpoints.h"

#include <optional>

#include "comm/watchdog.h"
#include "core/error.h"
#include "exchange/step_protocol.h"

namespace pstrain::trainer {

namespace {

// Async: the request flag lives on server 0; reading it waits for that rank (over TCP, osc/pt2pt needs its CPU).
constexpr const char* kReadingRequest = "reading the checkpoint request on server 0";

}  // namespace

TrainerCheckpoints::TrainerCheckpoints(const comm::WorldLayout& layout, std::uint64_t seed,
                                       const run_common::RunSchedule& schedule, const CheckpointSupport& support,
                                       exchange::GradientExchange& exchange, run_common::ModelStateAverage& model_state,
                                       const run_common::SampleLedger& ledger, std::span<const float> parameters)
    : layout_(layout),
      seed_(seed),
      schedule_(schedule),
      support_(support),
      exchange_(exchange),
      model_state_(model_state),
      ledger_(ledger),
      parameters_(parameters) {}

exchange::RequestedCheckpoints& TrainerCheckpoints::requested() {
  exchange::RequestedCheckpoints* requested = exchange_.requested_checkpoints();
  PSTRAIN_ASSERT(requested != nullptr, "checkpoints by request in a mode whose exchange takes no requests");
  return *requested;
}

void TrainerCheckpoints::save(const run_common::StepPosition& position) {
  model_state_.average();
  std::optional<ps::SliceState> slice;
  optim::Optimizer* optimizer = exchange_.own_optimizer();  // local and all-reduce trainers hold the whole state
  if (optimizer != nullptr && layout_.pservers == 0 && layout_.world_rank < support_.partition->shards()) {
    slice.emplace();  // ... and one of them gives it
    slice->parameters = parameters_;
    for (const auto& [name, values] : optimizer->state()) slice->optimizer.emplace_back(name, *values);
    slice->optimizer_steps = optimizer->steps_taken();
  }
  std::optional<checkpoint::OptimizerVectors> own_state;  // geo trainers: each its own, beside the servers' model
  if (optimizer != nullptr && layout_.pservers > 0 && !optimizer->state().empty()) {
    own_state.emplace();
    for (const auto& [name, values] : optimizer->state()) own_state->emplace_back(name, *values);
  }
  checkpoint::TrainingState state;
  state.pass = position.pass;
  state.step_in_pass = position.step_in_pass;
  state.global_step = position.global_step;
  state.seed = seed_;
  support_.writer->save(*support_.partition, slice ? &*slice : nullptr, ledger_.consumed_by_me(), state,
                        layout_.is_lead_trainer() ? model_state_.state() : std::span<const float>(),
                        own_state ? &*own_state : nullptr);
}

int TrainerCheckpoints::join_async(const run_common::StepPosition& position) {
  requested().quiesce();
  save(position);
  return static_cast<int>(exchange::end_async_checkpoint(0, {}));
}

bool TrainerCheckpoints::after_step(const run_common::StepPosition& position, std::int64_t step, std::int64_t steps,
                                    int flags) {
  if (support_.writer == nullptr) return false;
  if (support_.asynchronous) {
    const int request = [&] {
      const comm::Watchdog::Wait wait(kReadingRequest);
      return requested().checkpoint_request(
          support_.writer->async_wish(position.global_step, layout_.is_lead_trainer()));
    }();
    return request != 0 && exchange::stops_after_checkpoint(join_async(position));
  }
  const run_common::AfterStep next = schedule_.after_common_step(step, steps, position.global_step, flags);
  if (next != run_common::AfterStep::kGoOn) save(position);
  return next == run_common::AfterStep::kCheckpointAndStop;
}

void TrainerCheckpoints::request_end_of_pass(std::int64_t global_step) {
  if (!asynchronous() || !layout_.is_lead_trainer()) return;
  const comm::Watchdog::Wait wait(kReadingRequest);
  requested().checkpoint_request(exchange::kCheckpointNow | support_.writer->async_wish(global_step, false));
}

int TrainerCheckpoints::after_pass(const run_common::StepPosition& position, int last_step_flags) {
  if (support_.writer == nullptr) return 0;
  if (support_.asynchronous) return join_async(position);
  save(position);
  return last_step_flags;
}

}  // namespace pstrain::trainer
