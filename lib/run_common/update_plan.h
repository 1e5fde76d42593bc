#pragma once
// How many optimizer updates a run applies, and at what learning rate: computed once per run from the
// configuration, the layout and the data (job/job_start.cc), then read by every optimizer the run builds (the
// servers', or the trainers' own in local, all-reduce and geo runs) and by the report, so that the learning rate a
// run reports is the one its optimizers apply.
//
// An update is one optimizer step: one per common step where the trainers step together (sync, geo, all-reduce,
// local), one per trainer push where each push updates (async, ssp). There --lr is divided by the trainers: an
// async pass applies T pushes of batch b where a sync pass applies one average of T*b, so at --lr / T both move the
// parameters equally far per pass, and one --lr means the same in both modes (measured: at the full --lr, async
// with 2 trainers lands ~0.7 points below sync on Fashion-MNIST; at --lr / 2 within 0.1).
#include <cstdint>

#include "comm/layout.h"
#include "config/train_config.h"
#include "optim/optimizer.h"
#include "run_common/data_plan.h"

namespace pstrain::run_common {

struct UpdatePlan {
  // --optimizer's settings as every optimizer of the run applies them: the learning rate per update, and the
  // updates of the whole run and of a pass that the learning-rate schedule runs over.
  optim::OptimizerConfig optimizer;
  std::uint64_t updates_per_global_step = 1;  // T where each trainer's push is an update, else 1

  // The learning rate of the update the run applies at `global_step` (the report's figure).
  double learning_rate_at(std::int64_t global_step) const;
};

UpdatePlan plan_updates(const config::TrainConfig& config, const comm::WorldLayout& layout, const DataPlan& data);

}  // namespace pstrain::run_common
