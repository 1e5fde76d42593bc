#include "job/exchange_factory.h"

#include <algorithm>
#include <vector>

#include "allreduce/allreduce_exchange.h"
#include "core/error.h"
#include "core/log.h"
#include "exchange/local_exchange.h"
#include "job/mode_exchanges.h"
#include "run/decay_mask.h"

namespace pstrain::train {

std::unique_ptr<optim::Optimizer> whole_model_optimizer(const JobContext& job) {
  const ps::ShardPlan whole(parameter_sizes(job.model), 1, job.model.parameter_count);
  return optim::make_optimizer(job.updates.optimizer, job.model.parameter_count,
                               decay_mask(job.updates.optimizer, job.model.parameters, whole, 0));
}

namespace {

// The optimizer of a rank that holds the whole model and its state (local and all-reduce training), restored from
// the checkpoint when resuming; `start` receives the parameters to begin from.
std::unique_ptr<optim::Optimizer> restored_optimizer(const JobContext& job, const RunState& run,
                                                     std::vector<float>& start) {
  PSTRAIN_ASSERT(run.initial.size() == job.model.parameter_count, "starting parameters for ", run.initial.size(),
                 " of ", job.model.parameter_count, " parameters");
  auto optimizer = whole_model_optimizer(job);
  start = run.initial;
  if (run.resumed) {
    const checkpoint::ModelState& state = run.resumed->model;
    start = state.parameters;
    for (const auto& [name, target] : optimizer->state()) {
      const auto found = std::find_if(state.optimizer_state.begin(), state.optimizer_state.end(),
                                      [&](const auto& entry) { return entry.first == name; });
      PSTRAIN_ASSERT(found != state.optimizer_state.end(), "checkpoint lacks optimizer state ", name);
      *target = found->second;
    }
    optimizer->set_steps_taken(state.optimizer_steps);
  }
  return optimizer;
}

std::unique_ptr<exchange::GradientExchange> make_local(const JobContext& job, const ExchangeParts& parts) {
  std::vector<float> initial;
  auto optimizer = restored_optimizer(job, parts.run, initial);
  return exchange::make_local_exchange(std::move(optimizer), initial);
}

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_allreduce_replicas(const JobContext& job, const ExchangeParts& parts) {
  std::vector<float> initial;
  auto optimizer = restored_optimizer(job, parts.run, initial);
  allreduce::AllreduceSetup setup;
  setup.trainers = parts.trainers;
  setup.backend = &parts.backend;
  setup.backend_gradient = parts.model.backend_gradients();
  setup.length = job.model.parameter_count;
  setup.check_every_steps = job.config.check_replicas_every_steps;
  setup.stream_bucket_floats = parts.overlap.allreduce_bucket_floats;
  // NCCL refuses two ranks on one GPU: trainers beyond the node's GPU count share one and use MPI instead.
  const bool exclusive_gpu = job.layout.local_trainer_rank < compute::gpu_count();
  auto summation = allreduce::make_summation(parts.trainers, parts.backend, exclusive_gpu);
  if (job.layout.is_lead_trainer())
    log_info("all-reduce over ", job.layout.trainers, " trainers with ", summation->name());
  return allreduce::make_allreduce_exchange(std::move(optimizer), initial, std::move(summation), setup);
}

std::unique_ptr<exchange::GradientExchange> make_exchange(const JobContext& job, const ExchangeParts& parts) {
  if (job.layout.world_size == 1) return make_local(job, parts);
  return exchange_maker(job.config.mode)(job, parts);
}

}  // namespace pstrain::train
