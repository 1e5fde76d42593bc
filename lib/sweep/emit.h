#pragma once
// Cluster submission files for a sweep: Kubernetes (one Job per set from a template, or one Indexed Job) and a
// Slurm array script. They are text generated from the sets on disk; nothing is submitted.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sweep/sets.h"

namespace pstrain::sweep {

struct ClusterSettings {
  std::string sweep_dir;  // as the pods / compute nodes see it (a shared volume)
  std::string data_dir;
  std::string pstrain = "pstrain";              // the trainer's path there
  std::string pstrain_sweep = "pstrain-sweep";  // this tool's path there (Indexed Job)
  std::string name = "pstrain-sweep";           // job name prefix
  std::string image = "pstrain:latest";
  int ranks = 1;     // MPI ranks per run; > 1 runs through mpirun (k8s) or srun (Slurm)
  int parallel = 0;  // runs at once (Indexed Job parallelism, Slurm %K); 0: no limit
};

// Replaces every {{NAME}} with variables.at(NAME); Error(kUsage) names an unknown or unclosed placeholder.
std::string expand_template(const std::string& text, const std::map<std::string, std::string>& variables,
                            const std::string& source);

// The per-set Job template built in when no --template is given.
std::string default_job_template();

// One document per set, joined by "---". Variables: SET_ID (1-based), SET_INDEX (0-based), NUM_SETS, NAME
// (DNS-safe: name-0001), FLAGS (shell words), FLAGS_YAML_LIST (["--lr", "0.01"]), ARGS_YAML_LIST (the whole
// pstrain argument list including --data-dir and --output-dir), COMMAND_YAML_LIST (the trainer command, with
// mpirun when ranks > 1), OUTPUT_DIR, SWEEP_DIR, DATA_DIR, PSTRAIN, IMAGE, RANKS.
std::string emit_k8s_jobs(const std::vector<HyperparameterSet>& sets, const ClusterSettings& settings,
                          const std::string& job_template, const std::string& template_source);

// One batch/v1 Job with completionMode Indexed and completions = number of sets; each pod runs
// `pstrain-sweep run-one`, which picks its set from JOB_COMPLETION_INDEX.
std::string emit_k8s_indexed(std::size_t set_count, const ClusterSettings& settings);

// An sbatch script: #SBATCH --array=0-(N-1); each task runs line SLURM_ARRAY_TASK_ID of sets.txt.
std::string emit_slurm(std::size_t set_count, const ClusterSettings& settings);

std::string yaml_list(const std::vector<std::string>& words);  // ["a", "b"]: a YAML flow sequence

}  // namespace pstrain::sweep
