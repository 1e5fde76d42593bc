#include "sweep/cli.h"

#include <unistd.h>

#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "core/options.h"
#include "sweep/emit.h"
#include "sweep/expand.h"
#include "sweep/process.h"
#include "sweep/report.h"
#include "sweep/runner.h"
#include "sweep/search_space.h"
#include "sweep/sets.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace pstrain::sweep {

namespace {

constexpr const char* kUsage = R"(usage: pstrain-sweep COMMAND [options]      (COMMAND --help for its options)

  grid       --space FILE --sweep-dir DIR                 every combination of the [grid] values
  random     --space FILE --sweep-dir DIR --trials N [--seed S]   N draws from [random] (and [grid] as choices)
  emit k8s   --sweep-dir DIR --data-dir DIR [--template FILE | --indexed]   Kubernetes YAML, one Job per set
  emit slurm --sweep-dir DIR --data-dir DIR               an sbatch array script, one task per set
  run local  --sweep-dir DIR --data-dir DIR [--parallel K] [--np R]   run the sets here, K at a time
  run-one    --sweep-dir DIR --data-dir DIR [--set N]     run the set chosen by JOB_ID (1-based),
                                                          JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID (0-based)
  report     --sweep-dir DIR [--by best|final]            leaderboard, report.csv, report.json
  --version  the version; --help  this help

grid/random write SWEEP_DIR/sets/set-0001.ini ... (pstrain --config files, 1-based) and SWEEP_DIR/sets.txt (one
line of pstrain flags per set, line k+1 = set k+1). Runs go to SWEEP_DIR/runs/set-NNNN/; a set whose final
pass-NNNNN/done exists is skipped, so rerunning `run local` resumes an interrupted sweep.

Exit codes: 0 ok, 2 bad flag or search space, 3 missing or unreadable sweep files, 4 cannot write,
7 one or more sets failed (run local); run-one exits with pstrain's code (the codes of every pstrain program: docs/outputs.md).
)";

constexpr const char* kSpaceHelp = R"(
Search space file (--space):
  # comment, also after a value
  [fixed]                          one value, given to every run
  passes = 2
  hidden = 64,32
  [grid]                           alternatives separated by '|'; grid = their cartesian product
  lr = 0.01 | 0.05 | 0.1
  optimizer = momentum | adam
  [random]                         distributions drawn by `random` (mt19937_64 seeded by --seed)
  lr = loguniform(0.001, 0.1)      log-uniform, 0 < lo < hi
  momentum = uniform(0.8, 0.99)    uniform, lo < hi
  seed = int(1, 1000)              integer, both ends included
  batch-size = choice(32 | 64 | 128)
Keys are pstrain flags (pstrain --help) without "--"; every value is checked by pstrain's own rules. A flag may
appear once, in one section. --data-dir and --output-dir are set by pstrain-sweep and may not appear. `grid`
refuses [random] entries; `random` draws each [grid] entry as a uniform choice.
)";

struct Parsed {
  po::variables_map values;
  bool help = false;
};

Parsed parse(const std::string& command, po::options_description options, const std::vector<std::string>& args,
             std::ostream& out, const char* extra_help = "") {
  options.add_options()("help,h", "this help");
  Parsed parsed;
  try {
    po::store(po::command_line_parser(args).options(options).run(), parsed.values);
    po::notify(parsed.values);
  } catch (const po::error& error) {
    throw Error(ExitCode::kUsage, cat(command, ": ", describe(error), " (see pstrain-sweep ", command, " --help)"));
  }
  if (parsed.values.count("help")) {
    out << "usage: pstrain-sweep " << command << " [options]\n" << options << extra_help;
    parsed.help = true;
  }
  return parsed;
}

std::string required(const po::variables_map& values, const std::string& command, const char* flag) {
  if (!values.count(flag) || values[flag].as<std::string>().empty()) {
    throw Error(ExitCode::kUsage, cat(command, ": --", flag, " is required"));
  }
  return values[flag].as<std::string>();
}

// The pstrain built beside this executable: build/bin/pstrain-sweep -> build/bin/pstrain.
std::string default_pstrain() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("pstrain") : (self.parent_path() / "pstrain").string();
}

// Where k8s/Dockerfile installs the programs in the image.
const std::string kImagePrefix = "/opt/pstrain/bin";

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::kInputData, cat("cannot read ", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void print_sets(const std::vector<HyperparameterSet>& sets, const fs::path& sweep_dir, std::ostream& out) {
  for (const auto& set : sets) out << set_name(set.id) << ": " << flags_to_shell(set.flags) << "\n";
  out << sets.size() << " set(s) in " << (sweep_dir / "sets").string() << " and " << (sweep_dir / "sets.txt").string()
      << "\n";
}

int command_generate(const std::string& command, const std::vector<std::string>& args, std::ostream& out) {
  po::options_description options(command == "grid" ? "grid: every combination of the [grid] values"
                                                    : "random: N draws from the search space");
  // clang-format off
  options.add_options()
      ("space", po::value<std::string>(), "search space file (format below)")
      ("sweep-dir", po::value<std::string>(), "where sets/, sets.txt and later runs/ go");
  // clang-format on
  if (command == "random") {
    // clang-format off
    options.add_options()
        ("trials", po::value<int>(), "number of sets to draw")
        ("seed", po::value<unsigned long long>()->default_value(1), "seed of the draws (same seed, same sets)");
    // clang-format on
  }
  const Parsed parsed = parse(command, options, args, out, kSpaceHelp);
  if (parsed.help) return 0;
  const auto& values = parsed.values;
  const SearchSpace space = load_search_space(required(values, command, "space"));
  const fs::path sweep_dir = required(values, command, "sweep-dir");
  std::vector<HyperparameterSet> sets;
  if (command == "grid") {
    sets = expand_grid(space);
  } else {
    if (!values.count("trials")) throw Error(ExitCode::kUsage, "random: --trials is required");
    sets = expand_random(space, values["trials"].as<int>(), values["seed"].as<unsigned long long>());
  }
  write_sets(sweep_dir, sets);
  // Keep the space beside its sets, so a sweep folder says where its sets came from.
  write_file_atomically(sweep_dir / "space.ini", read_file(space.source));
  print_sets(sets, sweep_dir, out);
  return 0;
}

void add_cluster_options(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("sweep-dir", po::value<std::string>(), "the sweep folder (grid/random); also its path on the cluster, a shared volume")
      ("data-dir", po::value<std::string>(), "pstrain-data folder, as the cluster sees it")
      ("pstrain", po::value<std::string>()->default_value(default_pstrain()), "pstrain's path on the cluster (emit k8s: default /opt/pstrain/bin/pstrain, the image's)")
      ("name", po::value<std::string>()->default_value("pstrain-sweep"), "job name (prefix)")
      ("np", po::value<int>()->default_value(1), "MPI ranks per run")
      ("parallel", po::value<int>()->default_value(0), "runs at once (0: no limit)")
      ("output,o", po::value<std::string>(), "write here instead of stdout");
  // clang-format on
}

ClusterSettings cluster_settings(const po::variables_map& values, const std::string& command) {
  ClusterSettings settings;
  settings.sweep_dir = fs::absolute(required(values, command, "sweep-dir")).lexically_normal().string();
  settings.data_dir = fs::absolute(required(values, command, "data-dir")).lexically_normal().string();
  settings.pstrain = values["pstrain"].as<std::string>();
  settings.name = values["name"].as<std::string>();
  settings.ranks = values["np"].as<int>();
  settings.parallel = values["parallel"].as<int>();
  if (settings.ranks < 1) throw Error(ExitCode::kUsage, cat(command, ": --np must be >= 1"));
  if (settings.parallel < 0) throw Error(ExitCode::kUsage, cat(command, ": --parallel must be >= 0"));
  return settings;
}

void write_output(const po::variables_map& values, const std::string& text, std::ostream& out) {
  if (values.count("output")) {
    write_file_atomically(values["output"].as<std::string>(), text);
  } else {
    out << text;
  }
}

int command_emit_k8s(const std::vector<std::string>& args, std::ostream& out) {
  const std::string command = "emit k8s";
  po::options_description options("emit k8s: Kubernetes YAML for the sweep");
  add_cluster_options(options);
  // clang-format off
  options.add_options()
      ("template", po::value<std::string>(), "Job or MPIJob YAML expanded once per set (default: a built-in batch/v1 Job)")
      ("indexed", po::bool_switch(), "one Indexed Job (completions = sets) whose pods run `pstrain-sweep run-one`")
      ("image", po::value<std::string>()->default_value("pstrain:latest"), "container image")
      ("pstrain-sweep", po::value<std::string>()->default_value(kImagePrefix + "/pstrain-sweep"), "pstrain-sweep's path in the image (--indexed)");
  // clang-format on
  const Parsed parsed = parse(command, options, args, out, R"(
Template placeholders: {{SET_ID}} (1-based, also the JOB_ID the article's jobs use), {{SET_INDEX}} (0-based),
{{NUM_SETS}}, {{NAME}} (name-0001), {{FLAGS}} (shell words), {{FLAGS_YAML_LIST}} (["--lr", "0.01"]),
{{ARGS_YAML_LIST}} (all pstrain arguments with --data-dir/--output-dir), {{COMMAND_YAML_LIST}} (the whole
command, through mpirun when --np > 1), {{OUTPUT_DIR}}, {{SWEEP_DIR}}, {{DATA_DIR}}, {{PSTRAIN}}, {{IMAGE}},
{{RANKS}}. An unknown placeholder is an error. Documents are separated by '---'.
)");
  if (parsed.help) return 0;
  const auto& values = parsed.values;
  ClusterSettings settings = cluster_settings(values, command);
  // The programs run in the image (k8s/Dockerfile installs them in /opt/pstrain/bin), not where this one was built.
  if (values["pstrain"].defaulted()) settings.pstrain = kImagePrefix + "/pstrain";
  settings.image = values["image"].as<std::string>();
  settings.pstrain_sweep = values["pstrain-sweep"].as<std::string>();
  const auto sets = load_sets(settings.sweep_dir);
  if (values["indexed"].as<bool>()) {
    if (values.count("template"))
      throw Error(ExitCode::kUsage, "emit k8s: --indexed and --template exclude each other");
    write_output(values, emit_k8s_indexed(sets.size(), settings), out);
    return 0;
  }
  const bool custom = values.count("template") > 0;
  const std::string job_template = custom ? read_file(values["template"].as<std::string>()) : default_job_template();
  write_output(values,
               emit_k8s_jobs(sets, settings, job_template,
                             custom ? values["template"].as<std::string>() : "built-in template"),
               out);
  return 0;
}

int command_emit_slurm(const std::vector<std::string>& args, std::ostream& out) {
  const std::string command = "emit slurm";
  po::options_description options("emit slurm: an sbatch array script, task k runs line k+1 of sets.txt");
  add_cluster_options(options);
  const Parsed parsed = parse(command, options, args, out);
  if (parsed.help) return 0;
  const ClusterSettings settings = cluster_settings(parsed.values, command);
  const auto sets = load_sets(settings.sweep_dir);
  ensure_writable_folder(fs::path(settings.sweep_dir) / "logs");  // sbatch does not create --output folders
  write_output(parsed.values, emit_slurm(sets.size(), settings), out);
  return 0;
}

void add_run_options(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("sweep-dir", po::value<std::string>(), "the sweep folder (grid/random)")
      ("data-dir", po::value<std::string>(), "pstrain-data folder")
      ("pstrain", po::value<std::string>()->default_value(default_pstrain()), "the trainer")
      ("np", po::value<int>()->default_value(1), "MPI ranks per run (1: pstrain runs directly, no mpirun)")
      ("mpirun", po::value<std::string>()->default_value("mpirun"), "MPI launcher")
      ("mpirun-args", po::value<std::string>()->default_value("--oversubscribe --bind-to none"),
       "launcher arguments before -np (space separated)");
  // clang-format on
}

RunSettings run_settings(const po::variables_map& values, const std::string& command) {
  RunSettings settings;
  settings.sweep_dir = required(values, command, "sweep-dir");
  settings.data_dir = required(values, command, "data-dir");
  settings.pstrain = values["pstrain"].as<std::string>();
  settings.ranks = values["np"].as<int>();
  settings.mpirun = values["mpirun"].as<std::string>();
  std::istringstream words(values["mpirun-args"].as<std::string>());
  settings.mpirun_args.clear();
  for (std::string word; words >> word;) settings.mpirun_args.push_back(word);
  return settings;
}

int command_run_local(const std::vector<std::string>& args, std::ostream& out) {
  const std::string command = "run local";
  po::options_description options("run local: every set on this machine, into SWEEP_DIR/runs/set-NNNN/");
  add_run_options(options);
  options.add_options()("parallel", po::value<int>()->default_value(1), "runs at once");
  const Parsed parsed = parse(command, options, args, out);
  if (parsed.help) return 0;
  RunSettings settings = run_settings(parsed.values, command);
  settings.parallel = parsed.values["parallel"].as<int>();
  const auto sets = load_sets(settings.sweep_dir);
  const RunSummary summary = run_sets(settings, sets, out);
  out << sets.size() << " set(s): " << summary.count(SetState::kSucceeded) << " ran, "
      << summary.count(SetState::kSkipped) << " skipped (already complete), " << summary.count(SetState::kFailed)
      << " failed\n";
  for (const auto& outcome : summary.outcomes) {
    if (outcome.state == SetState::kFailed) out << "  " << set_name(outcome.id) << ": " << outcome.detail << "\n";
  }
  return summary.count(SetState::kFailed) == 0 ? 0 : kSetsFailedExitCode;
}

int command_run_one(const std::vector<std::string>& args, std::ostream& out) {
  const std::string command = "run-one";
  po::options_description options("run-one: the set chosen by --set or the environment (a cluster task)");
  add_run_options(options);
  options.add_options()("set", po::value<int>(),
                        "set number, 1-based (default: from JOB_ID, JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)");
  const Parsed parsed = parse(command, options, args, out);
  if (parsed.help) return 0;
  RunSettings settings = run_settings(parsed.values, command);
  settings.capture_logs = false;  // the pod's or task's own log is where people look
  const auto sets = load_sets(settings.sweep_dir);
  SetSelection selection;
  if (parsed.values.count("set")) {
    const int id = parsed.values["set"].as<int>();
    if (id < 1 || static_cast<std::size_t>(id) > sets.size()) {
      throw Error(ExitCode::kUsage, cat("run-one: --set ", id, " is not in 1..", sets.size()));
    }
    selection = {static_cast<std::size_t>(id - 1), cat("--set ", id)};
  } else {
    selection = select_set(process_environment(), sets.size());
  }
  const HyperparameterSet& set = sets[selection.index];
  out << "run-one: " << set_name(set.id) << " (" << selection.reason << "): " << flags_to_shell(set.flags) << std::endl;
  const RunSummary summary = run_sets(settings, {set}, out);
  return summary.outcomes.front().exit_code;
}

// pstrain-plot draws report.png (lib/report/plot, the same code as a run's plots). It lies beside pstrain-sweep,
// in build/bin as in PREFIX/bin.
std::optional<fs::path> find_plotter() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) return std::nullopt;
  const fs::path plotter = self.parent_path() / "pstrain-plot";
  if (!fs::exists(plotter, error)) return std::nullopt;
  return plotter;
}

// report.png through pstrain-plot (Python and matplotlib): a missing plotter is a warning, not a failed report.
std::string draw_report_plot(const fs::path& sweep_dir) {
  const std::optional<fs::path> plotter = find_plotter();
  if (!plotter) return "report.png not drawn: pstrain-plot not found beside pstrain-sweep";
  ChildProcess plot({plotter->string(), "--sweep", sweep_dir.string()}, sweep_dir / "report-plot.log");
  const ExitStatus status = plot.wait();
  if (status.ok()) return cat("drew ", (sweep_dir / "report.png").string());
  constexpr int kNoMatplotlib = 10;  // pstrain-plot's exit code for a missing python3-matplotlib
  return cat("report.png not drawn (",
             status.code == kNoMatplotlib ? "python3-matplotlib is not installed" : status.describe(), "; see ",
             (sweep_dir / "report-plot.log").string(), ")");
}

int command_report(const std::vector<std::string>& args, std::ostream& out) {
  const std::string command = "report";
  po::options_description options("report: leaderboard of the sets by test accuracy");
  // clang-format off
  options.add_options()
      ("sweep-dir", po::value<std::string>(), "the sweep folder")
      ("by", po::value<std::string>()->default_value("best"), "best (best pass of each set) | final (last pass)")
      ("top", po::value<std::size_t>()->default_value(20), "rows printed (the files hold every set)");
  // clang-format on
  const Parsed parsed = parse(command, options, args, out);
  if (parsed.help) return 0;
  const fs::path sweep_dir = required(parsed.values, command, "sweep-dir");
  const std::string by = parsed.values["by"].as<std::string>();
  if (by != "best" && by != "final") throw Error(ExitCode::kUsage, cat("report: --by '", by, "' is not best or final"));
  const Report report = build_report(sweep_dir, load_sets(sweep_dir), by == "best" ? RankBy::kBest : RankBy::kFinal);
  write_report_files(sweep_dir, report);
  out << format_leaderboard(report, parsed.values["top"].as<std::size_t>());
  out << "wrote " << (sweep_dir / "report.csv").string() << " and " << (sweep_dir / "report.json").string() << "\n";
  out << draw_report_plot(sweep_dir) << "\n";
  return 0;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    out << kUsage << kSpaceHelp;
    return args.empty() ? static_cast<int>(ExitCode::kUsage) : 0;
  }
  if (args[0] == "--version") {
    out << "pstrain-sweep " << PSTRAIN_VERSION << "\n";
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "grid" || command == "random") return command_generate(command, args, out);
  if (command == "run-one") return command_run_one(args, out);
  if (command == "report") return command_report(args, out);
  if (command == "emit" || command == "run") {
    const std::string what = args.empty() ? "" : args[0];
    if (!args.empty()) args.erase(args.begin());
    if (command == "emit" && what == "k8s") return command_emit_k8s(args, out);
    if (command == "emit" && what == "slurm") return command_emit_slurm(args, out);
    if (command == "run" && what == "local") return command_run_local(args, out);
    throw Error(ExitCode::kUsage, cat("'", command, " ", what, "' is not a command: use ",
                                      command == "emit" ? "emit k8s or emit slurm" : "run local", " (see --help)"));
  }
  throw Error(ExitCode::kUsage, cat("unknown command '", command, "' (see pstrain-sweep --help)"));
}

}  // namespace pstrain::sweep
