#pragma once
// Callbacks a program that embeds the trainer hands to a job (job::run_job's overload taking them), to watch or
// pace a run at the points below, or to give trainers another compute backend. pstrain itself passes none: every
// default does nothing, so the job runs as if there were no callbacks. The test suite's pstrain-faults
// (tests/tools/pstrain_faults) slows, nudges and pauses runs through them.
// Contract: every rank calls its own object, from the thread that runs the job. A callback that blocks holds up
// its rank and everyone waiting on that rank (which is what a pacing callback wants); one that throws
// pstrain::Error ends the job like any error at that point.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "compute/backend.h"

namespace pstrain::run_common {

// A trainer's step, as the step callbacks see it.
struct StepEvent {
  int trainer = 0;               // this trainer's index, 0..trainers-1
  int trainers = 1;              // how many trainers the job has
  std::int64_t global_step = 0;  // the step's index over the whole run, from 0 (a resumed run continues it)
};

class RunHooks {
 public:
  virtual ~RunHooks() = default;

  // After a step's exchange, before its new parameters reach the compute backend: the trainer's copy of them,
  // which the callback may change (to model a replica that drifted, say).
  virtual void parameters_received(const StepEvent& /*step*/, std::span<float> /*parameters*/) {}
  // After a step's compute and exchange, which took `seconds`, before the step is counted and reported.
  virtual void step_computed(const StepEvent& /*step*/, double /*seconds*/) {}
  // After the step is counted and reported (its progress line, metrics and "first step done" are out).
  virtual void step_reported(const StepEvent& /*step*/) {}
  // On the rank writing a checkpoint, between its files (after model.h5, after config.ini): a write in progress.
  virtual void between_checkpoint_files() {}
  // At the end of a job that ran to its end, before this rank leaves it (MPI_Finalize); `trainer` is the
  // trainer's index, -1 on a server.
  virtual void before_leaving(int /*trainer*/) {}
  // A trainer's compute backend in place of the one --device chooses; null leaves the choice to --device.
  virtual std::unique_ptr<compute::Backend> trainer_backend(const std::string& /*device*/) { return nullptr; }
  // How many consecutive world ranks make one node when push groups are planned (comm/push_groups.h): k > 0
  // makes ranks [i k, i k + k) node i, so that one machine can stand in for several; 0: the real nodes.
  virtual int ranks_per_node() { return 0; }

  // The callbacks that do nothing (what pstrain runs with).
  static RunHooks& none() {
    static RunHooks nothing;
    return nothing;
  }
};

}  // namespace pstrain::run_common
