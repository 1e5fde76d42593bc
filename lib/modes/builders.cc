#include "modes/builders.h"

#include <array>
#include <utility>

#include "allreduce/summation.h"
#include "comm/communicator.h"
#include "core/error.h"
#include "core/log.h"
#include "modes/exchanges.h"

namespace pstrain::modes {

namespace {

// The whole-model modes (local, all-reduce): every parameter has a starting value.
void check_starting_parameters(const ModeInputs& in) {
  PSTRAIN_ASSERT(in.initial.size() == in.parameter_count, "starting parameters for ", in.initial.size(), " of ",
                 in.parameter_count, " parameters");
}

// The sync round over the transport --overlap chose (job/overlap_plan.h); with push groups (--node-aggregation,
// job/node_aggregation.h) the one-sided round where each group's leader pushes and pulls for the group.
// Collective over the trainers.
std::unique_ptr<exchange::GradientExchange> sync_round(const ModeInputs& in, ps::TableClient* tables) {
  if (in.layout.aggregates_pushes()) {
    PSTRAIN_ASSERT(in.sync == ps::SyncTransport::kOneSided, "node aggregation with streamed blocks");
    return make_node_sync_exchange(*in.data, *in.control,
                                   comm::Communicator::split(in.trainers, in.layout.push_slot(),
                                                             in.layout.trainer_index),
                                   tables);
  }
  if (in.sync == ps::SyncTransport::kOneSided) return make_sync_exchange(*in.data, tables);
  return make_streamed_sync_exchange(*in.data, *in.blocks, in.channel, tables);
}

std::unique_ptr<exchange::GradientExchange> make_sync(const ModeInputs& in) {
  return sync_round(in, in.tables);
}

std::unique_ptr<exchange::GradientExchange> make_async(const ModeInputs& in) {
  return make_async_exchange(*in.data, *in.control, in.trainers, in.poll_interval, in.stream_pushes, in.tables);
}

std::unique_ptr<exchange::GradientExchange> make_ssp(const ModeInputs& in) {
  return make_ssp_exchange(*in.data, *in.control, in.trainers, in.poll_interval, in.staleness, in.stream_pushes,
                           in.tables);
}

// GEO-SGD: the optimizer over the trainer's own copy, its state this trainer's own (restored where the run resumes:
// checkpoint/trainer_states.h), its step count at the run's global step; its parameters come from the servers, the
// rows of the row tables at their first lookup after a meeting.
std::unique_ptr<exchange::GradientExchange> make_geo(const ModeInputs& in) {
  StepsAloneParts parts;
  parts.meetings = sync_round(in, in.tables);
  parts.optimizer = in.trainer_optimizer();
  parts.optimizer->set_steps_taken(in.steps_taken);
  if (in.tables != nullptr) {
    parts.held_rows = in.held_rows_optimizer();
    parts.held_rows->set_steps_taken(in.steps_taken);
  }
  parts.tables = in.tables;
  parts.cadence = in.cadence;
  return make_geo_exchange(std::move(parts));
}

// Every rank a trainer with the whole model and its own optimizer.
std::unique_ptr<exchange::GradientExchange> make_allreduce(const ModeInputs& in) {
  check_starting_parameters(in);
  AllreduceSetup setup;
  setup.trainers = in.trainers;
  setup.backend = in.backend;
  setup.backend_gradient = in.backend_gradient;
  setup.length = in.parameter_count;
  setup.check_every_steps = in.check_replicas_every_steps;
  setup.stream_bucket_floats = in.allreduce_bucket_floats;
  // NCCL refuses two ranks on one GPU: trainers beyond the node's GPU count share one and use MPI instead.
  const bool exclusive_gpu = in.layout.local_trainer_rank < compute::gpu_count();
  auto summation = allreduce::make_summation(in.trainers, *in.backend, exclusive_gpu);
  if (in.layout.is_lead_trainer())
    log_info("all-reduce over ", in.layout.trainers, " trainers with ", summation->name());
  return make_allreduce_exchange(in.restored_optimizer(), in.initial, std::move(summation), setup);
}

using ExchangeMaker = std::unique_ptr<exchange::GradientExchange> (*)(const ModeInputs&);

// One row per mode of traits.cc: the exchange its trainers step with.
constexpr std::array<std::pair<Mode, ExchangeMaker>, 5> kExchanges = {{
    {Mode::kSync, make_sync},
    {Mode::kAsync, make_async},
    {Mode::kSsp, make_ssp},
    {Mode::kAllreduce, make_allreduce},
    {Mode::kGeo, make_geo},
}};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_mode_exchange(Mode mode, const ModeInputs& inputs) {
  for (const auto& [registered, maker] : kExchanges) {
    if (registered == mode) return maker(inputs);
  }
  PSTRAIN_ASSERT(false, "mode ", to_string(mode), " has no exchange in modes/builders.cc");
  return nullptr;
}

std::unique_ptr<exchange::GradientExchange> make_local_training(const ModeInputs& inputs) {
  check_starting_parameters(inputs);
  return make_local_exchange(inputs.restored_optimizer(), inputs.initial);
}

}  // namespace pstrain::modes
