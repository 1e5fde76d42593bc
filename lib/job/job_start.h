#pragma once
// The start of a job, phase by phase, every rank alike: the configuration; the output folder and the data layout;
// the row tables and the memory of each node; each rank's inputs (model, samples, test set, starting parameters);
// the checkpoint resumed from; the run's outputs opened. Each phase ends with every rank agreeing on how it went
// (comm::agree_on_failure), so a failure anywhere ends every rank with one message and one exit code, and nothing
// is written to --output-dir before the last phase (job/run_folder.h).
#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "compute/backend.h"
#include "job/run_folder.h"
#include "nn/model.h"
#include "run_common/job_context.h"
#include "run_common/run_state.h"

namespace pstrain::job {

struct JobStart {
  run_common::JobContext job;
  FolderContents folder;  // rank 0: what --output-dir held when the run started
  std::string resolved_ini;
  std::string pservers_chosen;  // --num-pservers -1: the count the sizing rule chose and why ("" otherwise)
  std::unique_ptr<compute::Backend> backend;
  std::unique_ptr<nn::Model> model;  // trainers
  run_common::RunState run;
  std::string resume_from;              // the checkpoint resumed from ("" for a fresh start)
  std::optional<RunFolderClaim> claim;  // rank 0: the run's hold on --output-dir, for its lifetime
};

// Fills `start`; `node` holds this node's ranks. Returns the exit code every rank returns now (an agreed failure,
// or 0 after --help, --version or --describe-model), or none: training follows, under the watchdog.
std::optional<int> start_job(JobStart& start, int world_rank, int world_size, const comm::Communicator& node, int argc,
                             char** argv);

}  // namespace pstrain::job
