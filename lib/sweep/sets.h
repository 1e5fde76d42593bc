#pragma once
// The numbered hyperparameter sets on disk, and how a cluster task finds its own.
//
// SWEEP_DIR/sets/set-0001.ini ...  one file per set (1-based, as Kubernetes JOB_ID), `flag = value` lines:
//                                  exactly the INI that `pstrain --config` reads
// SWEEP_DIR/sets.txt               one line of pstrain flags per set, shell-quoted; line k (0-based) is set k+1,
//                                  which is what a Slurm array task (SLURM_ARRAY_TASK_ID, 0-based) reads
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sweep/pstrain_flags.h"

namespace pstrain::sweep {

struct HyperparameterSet {
  int id = 0;  // 1-based
  Flags flags;
};

std::string set_name(int id);                                                   // "set-0001"
std::filesystem::path run_dir(const std::filesystem::path& sweep_dir, int id);  // SWEEP_DIR/runs/set-0001

std::string shell_quote(const std::string& word);            // leaves plain words alone, single-quotes the rest
std::string flags_to_shell(const Flags& flags);              // "--lr 0.01 --hidden 64,32"
std::vector<std::string> flags_to_args(const Flags& flags);  // {"--lr", "0.01", ...}

// Writes sets/ and sets.txt. Rewriting the same sets is a no-op (so `grid` can be rerun before resuming); a sweep
// folder that already holds different sets is refused with Error(kUsage), since its runs belong to those.
void write_sets(const std::filesystem::path& sweep_dir, const std::vector<HyperparameterSet>& sets);
// Reads sets/set-NNNN.ini back; Error(kInputData) when missing, malformed or not numbered 1..N.
std::vector<HyperparameterSet> load_sets(const std::filesystem::path& sweep_dir);

// An environment lookup (std::getenv in the tool, a map in tests).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

struct SetSelection {
  std::size_t index = 0;  // 0-based into the sets
  std::string reason;     // "JOB_ID=3" for messages
};

// The first of JOB_ID (1-based, one Kubernetes Job per set), JOB_COMPLETION_INDEX (0-based, Indexed Job),
// SLURM_ARRAY_TASK_ID (0-based) that is set. Error(kUsage) when none is set, or it is not a number in range.
SetSelection select_set(const EnvLookup& environment, std::size_t set_count);

}  // namespace pstrain::sweep
