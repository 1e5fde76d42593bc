#pragma once
// How many processors this process was given: what a rank may use for its BLAS and oneDNN threads, following the
// allocation rather than the machine (docs/performance.md, "CPU threads"): its affinity mask (mpirun's binding,
// cpusets, Slurm's task binding), a container's CPU limit (cgroup quota, which no affinity mask shows) and Slurm's
// --cpus-per-task.
#include <filesystem>
#include <optional>

namespace pstrain {

// The CPU limit of the cgroup this process runs in, in processors (a quota of 150000 per period of 100000 is 1.5),
// or none when unlimited or unknown. `root` is the cgroup file system (a parameter for the tests): cgroup v2's
// cpu.max, else v1's cpu/cpu.cfs_quota_us and cpu.cfs_period_us.
std::optional<double> cgroup_cpu_limit(const std::filesystem::path& root = "/sys/fs/cgroup");

// Threads for one rank: `processors` its affinity gives it, shared with `sharing` ranks that have the same mask,
// capped by its share of a container limit over `ranks_on_node` ranks and by Slurm's per-task CPUs; at least 1.
int threads_per_rank(int processors, int sharing, int ranks_on_node, std::optional<double> container_limit,
                     std::optional<int> cpus_per_task);

}  // namespace pstrain
