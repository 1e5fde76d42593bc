#pragma once
// Runs sets on this machine, K at a time, each into SWEEP_DIR/runs/set-NNNN/ (direct for one rank, mpirun
// otherwise). A set whose final pass-NNNNN/done exists is skipped, so rerunning an interrupted sweep resumes it;
// a set folder left half-written is moved aside to set-NNNN.incomplete-<time> (kept for inspection, never
// trained into, since pstrain refuses folders with pass folders) and the set runs again from the start.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sweep/process.h"
#include "sweep/sets.h"

namespace pstrain::sweep {

struct RunSettings {
  std::filesystem::path sweep_dir;
  std::filesystem::path data_dir;
  std::filesystem::path pstrain;
  int parallel = 1;  // runs at once
  int ranks = 1;     // MPI ranks per run
  std::string mpirun = "mpirun";
  // Several mpiruns share this machine: without these Open MPI refuses more ranks than cores, or pins every
  // run's rank 0 to the same core.
  std::vector<std::string> mpirun_args{"--oversubscribe", "--bind-to", "none"};
  bool capture_logs = true;  // stdout+stderr to runs/set-NNNN/pstrain.log; false: inherited (run-one)
};

enum class SetState { kSkipped, kSucceeded, kFailed };

struct SetOutcome {
  int id = 0;
  SetState state = SetState::kSkipped;
  std::string detail;  // why it failed: exit status and the last line of its log
  int exit_code = 0;   // the run's exit code (1 when it exited 0 without its final pass)
};

struct RunSummary {
  std::vector<SetOutcome> outcomes;  // in set order
  std::size_t count(SetState state) const;
};

// pass-(P-1)/done of the set's run folder, P from the set's --passes (pstrain's default when absent).
std::filesystem::path final_done_marker(const std::filesystem::path& sweep_dir, const HyperparameterSet& set);
bool set_complete(const std::filesystem::path& sweep_dir, const HyperparameterSet& set);

// Moves a run folder that exists but is not complete and holds no checkpoint to resume from (pstrain --resume auto
// continues one that does) to set-NNNN.incomplete-<time>; returns where it went.
std::optional<std::filesystem::path> move_incomplete_aside(const std::filesystem::path& sweep_dir,
                                                           const HyperparameterSet& set);

std::vector<std::string> run_command(const RunSettings& settings, const HyperparameterSet& set);

// Never throws for a failing set (it is reported in the summary); throws Error for problems of the sweep itself.
RunSummary run_sets(const RunSettings& settings, const std::vector<HyperparameterSet>& sets, std::ostream& progress);

}  // namespace pstrain::sweep
