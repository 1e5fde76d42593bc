#include "job/exchange_factory.h"

#include <algorithm>
#include <vector>

#include "checkpoint/trainer_states.h"
#include "core/error.h"
#include "core/log.h"
#include "modes/builders.h"
#include "run_common/decay_mask.h"
#include "run_common/model_factory.h"
#include "run_common/table_layout.h"

namespace pstrain::job {

std::unique_ptr<optim::Optimizer> whole_model_optimizer(const run_common::JobContext& job) {
  const ps::ShardPlan whole(run_common::parameter_sizes(job.model), 1, job.model.parameter_count);
  return optim::make_optimizer(job.updates.optimizer, job.model.parameter_count,
                               run_common::decay_mask(job.updates.optimizer, job.model.parameters, whole, 0));
}

namespace {

// The optimizer of a rank that holds the whole model and its state (local and all-reduce training), restored from
// the checkpoint when resuming.
std::unique_ptr<optim::Optimizer> restored_optimizer(const run_common::JobContext& job,
                                                     const run_common::RunState& run) {
  auto optimizer = whole_model_optimizer(job);
  if (run.resumed) {
    const checkpoint::ModelState& state = run.resumed->model;
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

// The optimizer a trainer runs on its own copy while the servers hold the model (geo), its own state restored from
// the checkpoint when resuming (the saved trainers' mean where their number changed: checkpoint/trainer_states.h).
std::unique_ptr<optim::Optimizer> trainer_optimizer(const run_common::JobContext& job,
                                                    const run_common::RunState& run) {
  std::vector<std::size_t> sizes;
  for (const nn::ParameterInfo& parameter : job.dense_parameters) sizes.push_back(parameter.size);
  const ps::ShardPlan dense(sizes, 1, std::max<std::size_t>(job.dense_count, 1));
  auto optimizer = optim::make_optimizer(job.updates.optimizer, job.dense_count,
                                         run_common::decay_mask(job.updates.optimizer, job.dense_parameters, dense, 0));
  const auto targets = optimizer->state();
  if (!run.resumed || targets.empty()) return optimizer;  // plain SGD keeps nothing
  std::vector<std::string> names;
  for (const auto& [name, target] : targets) names.push_back(name);
  const checkpoint::ResumedTrainerState saved =
      checkpoint::read_trainer_state(run.resumed_from, job.layout.trainer_index, job.layout.trainers, names,
                                     job.dense_parameters, job.dense_count);
  for (std::size_t v = 0; v < targets.size(); ++v) *targets[v].second = saved.state[v].second;
  if (job.layout.is_lead_trainer()) {
    log_info("trainers' optimizer state: ", saved.saved_trainers == job.layout.trainers
                                                ? std::string("each trainer's own, as saved")
                                                : cat("the mean of the ", saved.saved_trainers, " saved trainers'"));
  }
  return optimizer;
}

// geo with row tables by rows: the rows a trainer holds between meetings move by SGD at the run's learning rate and
// schedule (modes/geo.cc says why), with the weight decay of their tables.
std::unique_ptr<optim::Optimizer> held_rows_optimizer(const run_common::JobContext& job) {
  optim::OptimizerConfig sgd = job.updates.optimizer;
  sgd.kind = "sgd";
  sgd.nesterov = false;
  const bool masked = !sgd.decay_bias_and_norm && sgd.weight_decay != 0.0f;
  std::size_t size = 0;
  std::vector<std::uint8_t> mask;
  const std::vector<ps::RowCache> caches =
      run_common::row_caches(job, run_common::largest_batch(job.config, job.model));
  for (std::size_t t = 0; t < caches.size(); ++t) {
    const std::size_t floats = caches[t].rows * job.tables.table(t).width;
    size += floats;
    if (masked) mask.insert(mask.end(), floats, optim::decays(job.tables.table(t).name) ? 1 : 0);
  }
  return optim::make_optimizer(sgd, size, std::move(mask));
}

// The parameters a rank that holds the whole model starts from: the checkpoint's when resuming.
std::span<const float> starting_parameters(const run_common::RunState& run) {
  return run.resumed ? std::span<const float>(run.resumed->model.parameters) : std::span<const float>(run.initial);
}

// This job's values of what the modes are built from (modes/mode_inputs.h).
modes::ModeInputs mode_inputs(const run_common::JobContext& job, const ExchangeParts& parts) {
  modes::ModeInputs in;
  in.layout = job.layout;
  in.trainers = parts.trainers;
  in.data = parts.client;
  in.control = parts.control;
  in.tables = parts.tables;
  in.blocks = parts.blocks;
  in.channel = parts.channel;
  in.sync = parts.overlap.sync;
  in.stream_pushes = parts.overlap.stream_pushes;
  in.allreduce_bucket_floats = parts.overlap.allreduce_bucket_floats;
  in.poll_interval = std::chrono::microseconds(job.config.poll_interval_us);
  in.staleness = job.config.staleness;
  in.cadence = modes::meeting_cadence(job.config.mode, job.config.steps_alone);
  in.restored_optimizer = [&job, &parts] { return restored_optimizer(job, parts.run); };
  in.trainer_optimizer = [&job, &parts] { return trainer_optimizer(job, parts.run); };
  in.held_rows_optimizer = [&job] { return held_rows_optimizer(job); };
  in.initial = starting_parameters(parts.run);
  in.steps_taken = parts.run.resumed ? static_cast<std::uint64_t>(parts.run.resumed->training.global_step) : 0;
  in.backend = &parts.backend;
  in.backend_gradient = parts.model.backend_gradients();
  in.parameter_count = job.model.parameter_count;
  in.check_replicas_every_steps = job.config.check_replicas_every_steps;
  return in;
}

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_exchange(const run_common::JobContext& job,
                                                          const ExchangeParts& parts) {
  const modes::ModeInputs inputs = mode_inputs(job, parts);
  if (job.layout.world_size == 1) return modes::make_local_training(inputs);
  return modes::make_mode_exchange(job.config.mode, inputs);
}

}  // namespace pstrain::job
