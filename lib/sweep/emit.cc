#include "sweep/emit.h"

#include <algorithm>

#include "core/error.h"
#include "report/json_line.h"

namespace pstrain::sweep {

namespace {

std::string output_dir_of(const ClusterSettings& settings, int id) {
  return settings.sweep_dir + "/runs/" + set_name(id);
}

// The trainer command of one set: direct for one rank, mpirun otherwise (Open MPI in the container).
std::vector<std::string> trainer_command(const ClusterSettings& settings, const HyperparameterSet& set) {
  std::vector<std::string> command;
  if (settings.ranks > 1)
    command = {"mpirun", "--oversubscribe", "--bind-to", "none", "-np", std::to_string(settings.ranks)};
  command.push_back(settings.pstrain);
  for (const auto& word : std::vector<std::string>{"--data-dir", settings.data_dir, "--output-dir",
                                                   output_dir_of(settings, set.id), "--resume", "auto"}) {
    command.push_back(word);
  }
  for (const auto& word : flags_to_args(set.flags)) command.push_back(word);
  return command;
}

}  // namespace

std::string yaml_list(const std::vector<std::string>& words) {
  // JSON strings are valid YAML double-quoted scalars, so the list is correct wherever a YAML value may go.
  std::string out = "[";
  for (std::size_t i = 0; i < words.size(); ++i) out += cat(i ? ", " : "", report::json_quoted(words[i]));
  return out + "]";
}

std::string expand_template(const std::string& text, const std::map<std::string, std::string>& variables,
                            const std::string& source) {
  std::string out;
  std::size_t position = 0;
  while (true) {
    const auto open = text.find("{{", position);
    if (open == std::string::npos) break;
    const auto close = text.find("}}", open);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(open), '\n'));
    if (close == std::string::npos) throw Error(ExitCode::kUsage, cat(source, ":", line, ": unclosed '{{'"));
    const std::string name = text.substr(open + 2, close - open - 2);
    const auto found = variables.find(name);
    if (found == variables.end()) {
      std::string known;
      for (const auto& [key, value] : variables) known += (known.empty() ? "" : ", ") + key;
      throw Error(ExitCode::kUsage,
                  cat(source, ":", line, ": unknown placeholder {{", name, "}} (known: ", known, ")"));
    }
    out += text.substr(position, open - position) + found->second;
    position = close + 2;
  }
  return out + text.substr(position);
}

std::string default_job_template() {
  return R"X(apiVersion: batch/v1
kind: Job
metadata:
  name: {{NAME}}
  labels:
    app: pstrain-sweep
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: pstrain
          image: {{IMAGE}}
          env:
            - name: JOB_ID
              value: "{{SET_ID}}"
          command: {{COMMAND_YAML_LIST}}
)X";
}

std::string emit_k8s_jobs(const std::vector<HyperparameterSet>& sets, const ClusterSettings& settings,
                          const std::string& job_template, const std::string& template_source) {
  std::string out;
  for (const auto& set : sets) {
    // --resume auto: a retried Job (backoffLimit) continues from the set's newest checkpoint.
    std::vector<std::string> args{"--data-dir",   settings.data_dir,
                                  "--output-dir", output_dir_of(settings, set.id),
                                  "--resume",     "auto"};
    for (const auto& word : flags_to_args(set.flags)) args.push_back(word);
    const std::map<std::string, std::string> variables{
        {"SET_ID", std::to_string(set.id)},
        {"SET_INDEX", std::to_string(set.id - 1)},
        {"NUM_SETS", std::to_string(sets.size())},
        {"NAME", settings.name + "-" + set_name(set.id).substr(4)},
        {"FLAGS", flags_to_shell(set.flags)},
        {"FLAGS_YAML_LIST", yaml_list(flags_to_args(set.flags))},
        {"ARGS_YAML_LIST", yaml_list(args)},
        {"COMMAND_YAML_LIST", yaml_list(trainer_command(settings, set))},
        {"OUTPUT_DIR", output_dir_of(settings, set.id)},
        {"SWEEP_DIR", settings.sweep_dir},
        {"DATA_DIR", settings.data_dir},
        {"PSTRAIN", settings.pstrain},
        {"IMAGE", settings.image},
        {"RANKS", std::to_string(settings.ranks)},
    };
    std::string document = expand_template(job_template, variables, template_source);
    if (!document.empty() && document.back() != '\n') document += '\n';
    out += (out.empty() ? "" : "---\n") + document;
  }
  return out;
}

std::string emit_k8s_indexed(std::size_t set_count, const ClusterSettings& settings) {
  std::vector<std::string> command{settings.pstrain_sweep,
                                   "run-one",
                                   "--sweep-dir",
                                   settings.sweep_dir,
                                   "--data-dir",
                                   settings.data_dir,
                                   "--pstrain",
                                   settings.pstrain,
                                   "--np",
                                   std::to_string(settings.ranks)};
  const std::size_t parallelism = settings.parallel > 0 ? static_cast<std::size_t>(settings.parallel) : set_count;
  return cat(R"X(apiVersion: batch/v1
kind: Job
metadata:
  name: )X",
             settings.name, R"X(
  labels:
    app: pstrain-sweep
spec:
  completionMode: Indexed
  completions: )X",
             set_count, R"X(
  parallelism: )X",
             std::min(parallelism, set_count), R"X(
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: pstrain
          image: )X",
             settings.image, R"X(
          env:
          # run-one reads JOB_COMPLETION_INDEX (0-based) and runs that line of sets.txt
          command: )X",
             yaml_list(command), "\n");
}

std::string emit_slurm(std::size_t set_count, const ClusterSettings& settings) {
  const std::string limit = settings.parallel > 0 ? cat("%", settings.parallel) : "";
  const std::string launcher = settings.ranks > 1 ? "srun " : "";
  return cat(R"X(#!/bin/bash
# Generated by pstrain-sweep: one array task per hyperparameter set.
#SBATCH --job-name=)X",
             settings.name, R"X(
#SBATCH --array=0-)X",
             set_count - 1, limit, R"X(
#SBATCH --ntasks=)X",
             settings.ranks, R"X(
#SBATCH --output=)X",
             settings.sweep_dir, R"X(/logs/set-%a.out
set -euo pipefail
SWEEP_DIR=)X",
             shell_quote(settings.sweep_dir), R"X(
DATA_DIR=)X",
             shell_quote(settings.data_dir), R"X(
# Task k (0-based) runs line k+1 of sets.txt, which is set k+1; a requeued task resumes its set (--resume auto).
line=$((SLURM_ARRAY_TASK_ID + 1))
flags=$(sed -n "${line}p" "$SWEEP_DIR/sets.txt")
if [ -z "$flags" ]; then echo "sets.txt has no line $line" >&2; exit 2; fi
output="$SWEEP_DIR/runs/set-$(printf '%04d' "$line")"
eval "set -- $flags"   # the line is shell-quoted by pstrain-sweep
exec )X",
             launcher, shell_quote(settings.pstrain),
             R"X( --data-dir "$DATA_DIR" --output-dir "$output" --resume auto "$@"
)X");
}

}  // namespace pstrain::sweep
