#include "core/cpu_allocation.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace pstrain {

namespace fs = std::filesystem;

std::optional<double> cgroup_cpu_limit(const fs::path& root) {
  // cgroup v2: "max 100000" (no limit) or "QUOTA PERIOD".
  if (std::ifstream v2(root / "cpu.max"); v2) {
    std::string quota;
    double period = 0;
    if (v2 >> quota >> period && quota != "max" && period > 0) return std::stod(quota) / period;
    return std::nullopt;
  }
  // cgroup v1: a quota of -1 is no limit.
  std::ifstream quota_file(root / "cpu" / "cpu.cfs_quota_us");
  std::ifstream period_file(root / "cpu" / "cpu.cfs_period_us");
  double quota = -1;
  double period = 0;
  if (quota_file >> quota && period_file >> period && quota > 0 && period > 0) return quota / period;
  return std::nullopt;
}

int threads_per_rank(int processors, int sharing, int ranks_on_node, std::optional<double> container_limit,
                     std::optional<int> cpus_per_task) {
  int threads = std::max(1, processors / std::max(1, sharing));
  if (container_limit) {
    // A limit of 1.5 processors still lets one thread run flat out; half a processor is still one thread.
    const int whole = std::max(1, static_cast<int>(std::floor(*container_limit + 0.5)));
    threads = std::min(threads, std::max(1, whole / std::max(1, ranks_on_node)));
  }
  if (cpus_per_task && *cpus_per_task > 0) threads = std::min(threads, *cpus_per_task);
  return threads;
}

}  // namespace pstrain
