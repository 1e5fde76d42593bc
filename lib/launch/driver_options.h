#pragma once
// pstrain-elastic's command line:
//   pstrain-elastic --min-np A --max-np B --host-discovery-script S [--discovery-interval SEC]
//                   [--discovery-timeout SEC] [--max-restarts N] [--elastic-timeout SEC] [--cooldown SEC]
//                   [--stop-timeout SEC] [--pserver-ratio R] [--tcp] [--mca NAME VALUE]... -- PSTRAIN_FLAGS
// and what the driver reads from pstrain's own flags (command line, then PSTRAIN_* environment): --output-dir
// (required: elastic.jsonl and the checkpoints live there), --num-pservers (a fixed split; -1 or none: pstrain's
// sizing rule chooses at every size, unless --pserver-ratio is given), --mode (all-reduce
// has no servers), and whether --checkpoint-every-seconds / --progress-every-s were set. --resume is the
// driver's (it always passes --resume auto), so giving it is an error.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launch/policy.h"

namespace pstrain::launch {

struct DriverOptions {
  Limits limits;
  std::filesystem::path discovery_script;
  double discovery_interval_s = 1;  // as Horovod: a change costs at most a second to notice
  double discovery_timeout_s = 30;
  double stop_timeout_s = 120;  // a planned stop: time for the checkpoint and the exit before mpirun is ended
  bool tcp = false;
  std::vector<std::pair<std::string, std::string>> mca;
  std::string mpirun = "mpirun";
  std::filesystem::path pstrain;
  std::vector<std::string> pstrain_flags;  // as given, minus --num-pservers
  std::filesystem::path output_dir;
  bool user_checkpoint_seconds = false;
  bool user_progress_interval = false;
};

// The default periodic checkpoint of elastic mode (pstrain's --checkpoint-every-seconds): a crash loses at most
// this much training; a checkpoint of the MLP main job (1.9 MB) took 0.27-0.28 s here: under 0.5% of a minute.
inline constexpr double kDefaultCheckpointSeconds = 60;
// The progress line every second: how far a job got is known to within a second of steps (steps lost).
inline constexpr double kProgressSeconds = 1;

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Throws DriverError(kUsage) naming the bad flag. `self` is the driver's own path (pstrain is found beside it).
DriverOptions parse_driver_options(const std::vector<std::string>& args, const EnvLookup& env,
                                   const std::filesystem::path& self);
std::string driver_usage();

}  // namespace pstrain::launch
