#include "launch/driver_options.h"

#include <cmath>

#include "core/error.h"
#include "core/parse_number.h"
#include "launch/exit_codes.h"
#include "modes/traits.h"

namespace pstrain::launch {

namespace {

DriverError usage_error(const std::string& message) {
  return {DriverExit::kUsage, message};
}

int to_int(const std::string& flag, const std::string& text) {
  const std::optional<int> value = parse_number<int>(text);
  if (!value) throw usage_error(cat(flag, " needs a whole number, got '", text, "'"));
  return *value;
}

double to_seconds(const std::string& flag, const std::string& text, double smallest) {
  const std::optional<double> value = parse_number<double>(text);
  if (!value || *value < smallest) {
    throw usage_error(cat(flag, " needs a number of seconds >= ", smallest, ", got '", text, "'"));
  }
  return *value;
}

// A pstrain flag's value from the command line (--flag VALUE or --flag=VALUE), then PSTRAIN_FLAG.
std::optional<std::string> pstrain_value(const std::vector<std::string>& flags, const std::string& flag,
                                         const EnvLookup& env) {
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == flag && i + 1 < flags.size()) return flags[i + 1];
    if (flags[i].rfind(flag + "=", 0) == 0) return flags[i].substr(flag.size() + 1);
  }
  std::string variable = "PSTRAIN_" + flag.substr(2);
  for (char& c : variable) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return env(variable);
}

// The user's flags minus --num-pservers (the driver passes its own for every world size: the user's count, the
// --pserver-ratio split, or -1).
std::vector<std::string> without_num_pservers(const std::vector<std::string>& flags) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "--num-pservers") {
      ++i;
      continue;
    }
    if (flags[i].rfind("--num-pservers=", 0) == 0) continue;
    kept.push_back(flags[i]);
  }
  return kept;
}

void read_pstrain_flags(DriverOptions& options, const EnvLookup& env) {
  const auto& flags = options.pstrain_flags;
  if (pstrain_value(flags, "--resume", env)) {
    throw usage_error("do not pass --resume: the elastic driver resumes every launch with --resume auto");
  }
  const auto output = pstrain_value(flags, "--output-dir", env);
  if (!output || output->empty()) {
    throw usage_error("--elastic needs pstrain's --output-dir DIR after '--' (checkpoints and elastic.jsonl go there)");
  }
  options.output_dir = std::filesystem::absolute(*output);
  if (const auto servers = pstrain_value(flags, "--num-pservers", env); servers && *servers != "-1") {
    const int fixed = to_int("--num-pservers", *servers);
    if (fixed < 0) throw usage_error("--num-pservers must be >= 0");
    options.limits.rule.fixed_pservers = fixed;
  }
  if (const auto mode = pstrain_value(flags, "--mode", env)) {
    try {
      options.limits.rule.no_servers = !modes::mode_traits(modes::mode_named(*mode)).has_servers;
    } catch (const Error& error) {
      throw usage_error(error.what());  // pstrain would refuse it on every launch
    }
  }
  options.user_checkpoint_seconds = pstrain_value(flags, "--checkpoint-every-seconds", env).has_value();
  options.user_progress_interval = pstrain_value(flags, "--progress-every-s", env).has_value();
  options.pstrain_flags = without_num_pservers(flags);
}

void check_limits(const DriverOptions& options) {
  const Limits& limits = options.limits;
  if (limits.min_np < 1) throw usage_error("--min-np A is required (the fewest ranks to train with, >= 1)");
  if (limits.max_np < 1) throw usage_error("--max-np B is required (the most ranks to use, >= 1)");
  if (limits.min_np > limits.max_np) {
    throw usage_error(cat("--min-np ", limits.min_np, " is above --max-np ", limits.max_np));
  }
  if (options.discovery_script.empty()) {
    throw usage_error("--host-discovery-script S is required (it prints one 'host:slots' line per usable host)");
  }
  const LayoutRule& rule = limits.rule;
  if (rule.fixed_pservers && rule.no_servers && *rule.fixed_pservers > 0) {
    throw usage_error("--mode allreduce has no parameter servers: drop --num-pservers");
  }
  if (rule.fixed_pservers && limits.min_np < smallest_world(rule)) {
    throw usage_error(cat("--num-pservers ", *rule.fixed_pservers, " needs at least ", smallest_world(rule),
                          " ranks (servers + a trainer), but --min-np is ", limits.min_np));
  }
}

}  // namespace

std::string driver_usage() {
  return "usage: pstrain-launch --elastic --min-np A --max-np B --host-discovery-script S\n"
         "           [--discovery-interval SEC] [--discovery-timeout SEC] [--max-restarts N] [--elastic-timeout SEC]\n"
         "           [--cooldown SEC] [--stop-timeout SEC] [--pserver-ratio R] [--tcp] [--mca NAME VALUE]...\n"
         "           -- PSTRAIN_FLAGS (with --output-dir DIR)\n"
         "See lib/launch/README.md for what each does and the exit codes.\n";
}

DriverOptions parse_driver_options(const std::vector<std::string>& args, const EnvLookup& env,
                                   const std::filesystem::path& self) {
  DriverOptions options;
  options.limits.min_np = options.limits.max_np = 0;
  std::size_t i = 0;
  const auto value = [&](const std::string& flag) -> std::string {
    if (i + 1 >= args.size()) throw usage_error(cat(flag, " needs a value"));
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      options.pstrain_flags.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg == "--min-np")
      options.limits.min_np = to_int(arg, value(arg));
    else if (arg == "--max-np")
      options.limits.max_np = to_int(arg, value(arg));
    else if (arg == "--host-discovery-script")
      options.discovery_script = value(arg);
    else if (arg == "--discovery-interval")
      options.discovery_interval_s = to_seconds(arg, value(arg), 0.1);
    else if (arg == "--discovery-timeout")
      options.discovery_timeout_s = to_seconds(arg, value(arg), 0.1);
    else if (arg == "--max-restarts")
      options.limits.max_restarts = to_int(arg, value(arg));
    else if (arg == "--elastic-timeout")
      options.limits.elastic_timeout_s = to_seconds(arg, value(arg), 0);
    else if (arg == "--cooldown")
      options.limits.cooldown_s = to_seconds(arg, value(arg), 0);
    else if (arg == "--stop-timeout")
      options.stop_timeout_s = to_seconds(arg, value(arg), 1);
    else if (arg == "--pserver-ratio") {
      const double ratio = to_seconds(arg, value(arg), 0);
      if (ratio <= 0 || ratio >= 1) throw usage_error("--pserver-ratio must be between 0 and 1 (exclusive)");
      options.limits.rule.pserver_ratio = ratio;
    } else if (arg == "--tcp")
      options.tcp = true;
    else if (arg == "--mca") {
      const std::string name = value(arg);
      options.mca.emplace_back(name, value(arg));
    } else
      throw usage_error(cat("unknown flag '", arg, "' (pstrain's flags go after '--')"));
  }
  if (options.limits.max_restarts < 0) throw usage_error("--max-restarts must be >= 0");
  read_pstrain_flags(options, env);
  check_limits(options);
  options.mpirun = env("MPIRUN").value_or("mpirun");
  options.pstrain = env("PSTRAIN_BIN").value_or((self.parent_path() / "pstrain").string());
  return options;
}

}  // namespace pstrain::launch
