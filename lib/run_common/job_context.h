#pragma once
// Everything a rank knows about the job once configuration and data have been validated on every rank.
#include <chrono>
#include <string>

#include "comm/layout.h"
#include "config/train_config.h"
#include "core/timing.h"
#include "modes/traits.h"
#include "nn/model_plan.h"
#include "ps/table_plan.h"
#include "run_common/data_plan.h"
#include "run_common/run_hooks.h"
#include "run_common/update_plan.h"

namespace pstrain::run_common {

struct JobContext {
  config::TrainConfig config;
  comm::WorldLayout layout;
  DataPlan data;
  // The model description planned against the data (every rank: servers, shard plan and checkpoints read its
  // parameter layout; only trainers build the model itself).
  nn::ModelPlan model;
  // The tables the servers hold by rows (run_common/table_layout.h; none outside the parameter-server modes), and the
  // model's layout less them: what the servers' dense blocks cut and a checkpoint's model.h5 holds. Both are set
  // once the model is planned.
  ps::TablePlan tables;
  std::vector<nn::ParameterInfo> dense_parameters;
  std::size_t dense_count = 0;
  // The optimizer updates of the run and their learning rate (set once the data is planned): what every
  // optimizer the run builds applies, rather than config.optimizer as the user gave it.
  UpdatePlan updates;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // The callbacks of the program that started the job (run_common/run_hooks.h; pstrain's do nothing). Not owned: they
  // outlive the job.
  RunHooks* hooks = &RunHooks::none();

  const modes::ModeTraits& mode() const { return modes::mode_traits(config.mode); }
  bool steps_together() const { return modes::trainers_step_together(config.mode, layout.pservers); }
  double elapsed_seconds() const { return seconds_since(started); }
};

}  // namespace pstrain::run_common
