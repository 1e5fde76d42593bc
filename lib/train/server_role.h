#pragma once
// A parameter-server shard's part in the job: initialise (or resume) its slice, then serve the trainers, sync
// step by step or async until they are done, joining every checkpoint. The protocol is in
// exchange/step_protocol.h.
#include <vector>

#include "nn/model.h"
#include "ps/shard_plan.h"
#include "ps/windows.h"
#include "train/job_context.h"
#include "train/run_state.h"

namespace pstrain::train {

// Returns true when training completed, false when it stopped after a checkpoint on a signal. `parameters` is the
// model's layout, which the optimizer's weight-decay mask is built from (train/decay_mask.h).
bool run_server(const JobContext& job, ps::PsWindows& windows, const ps::ShardPlan& plan, RunState& run,
                const std::vector<nn::ParameterInfo>& parameters);

}  // namespace pstrain::train
