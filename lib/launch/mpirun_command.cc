#include "launch/mpirun_command.h"

#include "core/error.h"

namespace pstrain::launch {

std::string sequential_hostfile(const World& world, const std::string& this_host) {
  std::string text;
  for (const std::string& host : world.rank_hosts) {
    text += (host == "localhost" || host == "127.0.0.1" ? this_host : host) + "\n";
  }
  return text;
}

std::vector<std::string> mpirun_command(const DriverOptions& options, const World& world,
                                        const std::filesystem::path& hostfile,
                                        const std::vector<std::string>& forwarded) {
  std::vector<std::string>
      command{options.mpirun, "--hostfile", hostfile.string(), "--map-by", "seq", "-np", std::to_string(world.ranks()),
              "--bind-to",    "none"};
  if (options.tcp) {
    command.insert(command.end(), {"--mca", "btl", "tcp,self", "--mca", "osc", "pt2pt"});
  } else {
    command.insert(command.end(), {"--mca", "btl", "tcp,self,vader", "--mca", "osc", "sm,pt2pt"});
  }
  for (const auto& [name, value] : options.mca) command.insert(command.end(), {"--mca", name, value});
  for (const std::string& name : forwarded) command.insert(command.end(), {"-x", name});
  command.push_back(options.pstrain.string());
  command.insert(command.end(), options.pstrain_flags.begin(), options.pstrain_flags.end());
  if (!world.layout) {  // pstrain's sizing rule chooses; said explicitly, over a num-pservers in a --config file
    command.insert(command.end(), {"--num-pservers", "-1"});
  } else if (world.layout->pservers > 0) {
    command.insert(command.end(), {"--num-pservers", std::to_string(world.layout->pservers)});
  }
  command.insert(command.end(), {"--resume", "auto"});
  if (!options.user_checkpoint_seconds) {
    command.insert(command.end(), {"--checkpoint-every-seconds", cat(kDefaultCheckpointSeconds)});
  }
  if (!options.user_progress_interval) command.insert(command.end(), {"--progress-every-s", cat(kProgressSeconds)});
  return command;
}

}  // namespace pstrain::launch
