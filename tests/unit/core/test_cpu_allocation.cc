#include "core/cpu_allocation.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace pstrain {
namespace {

namespace fs = std::filesystem;

class CgroupFolder {
 public:
  CgroupFolder()
      : root_(fs::temp_directory_path() /
              ("pstrain-cgroup-" + std::to_string(::getpid()) + "-" + std::to_string(next_++))) {
    fs::create_directories(root_ / "cpu");
  }
  ~CgroupFolder() { fs::remove_all(root_); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(root_ / name) << text; }
  const fs::path& root() const { return root_; }

 private:
  static inline int next_ = 0;
  fs::path root_;
};

TEST(CgroupCpuLimit, CgroupV2QuotaIsProcessorsAndMaxIsNone) {
  const CgroupFolder limited;
  limited.write("cpu.max", "150000 100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_limit(limited.root()), 1.5);
  const CgroupFolder unlimited;
  unlimited.write("cpu.max", "max 100000\n");
  EXPECT_FALSE(cgroup_cpu_limit(unlimited.root()).has_value());
}

TEST(CgroupCpuLimit, CgroupV1QuotaOfMinusOneIsNone) {
  const CgroupFolder limited;
  limited.write("cpu/cpu.cfs_quota_us", "400000\n");
  limited.write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(*cgroup_cpu_limit(limited.root()), 4.0);
  const CgroupFolder unlimited;
  unlimited.write("cpu/cpu.cfs_quota_us", "-1\n");
  unlimited.write("cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_FALSE(cgroup_cpu_limit(unlimited.root()).has_value());
  const CgroupFolder none;
  EXPECT_FALSE(cgroup_cpu_limit(none.root()).has_value());
}

TEST(ThreadsPerRank, UnboundRanksShareTheNodesProcessors) {
  EXPECT_EQ(threads_per_rank(16, 4, 4, std::nullopt, std::nullopt), 4);
  EXPECT_EQ(threads_per_rank(2, 3, 3, std::nullopt, std::nullopt), 1);  // never fewer than one
}

TEST(ThreadsPerRank, BoundRanksUseTheirOwnProcessors) {
  EXPECT_EQ(threads_per_rank(4, 1, 8, std::nullopt, std::nullopt), 4);   // --map-by slot:PE=4
  EXPECT_EQ(threads_per_rank(1, 1, 16, std::nullopt, std::nullopt), 1);  // --bind-to core
}

TEST(ThreadsPerRank, ContainerLimitAndSlurmCpusPerTaskCap) {
  EXPECT_EQ(threads_per_rank(64, 2, 2, 8.0, std::nullopt), 4);  // a pod limited to 8 CPUs on a 64-core node
  EXPECT_EQ(threads_per_rank(64, 2, 2, 1.5, std::nullopt), 1);
  EXPECT_EQ(threads_per_rank(32, 1, 1, std::nullopt, 6), 6);  // srun --cpus-per-task 6
}

}  // namespace
}  // namespace pstrain
