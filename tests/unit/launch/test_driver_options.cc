#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "launch/driver_options.h"
#include "launch/exit_codes.h"
#include "launch/mpirun_command.h"

namespace pstrain::launch {
namespace {

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

DriverOptions parse(const std::string& line, std::map<std::string, std::string> env = {}) {
  return parse_driver_options(
      words(line),
      [env](const std::string& name) {
        const auto found = env.find(name);
        return found == env.end() ? std::nullopt : std::optional<std::string>(found->second);
      },
      "/opt/pstrain/bin/pstrain-elastic");
}

void expect_usage_error(const std::string& line, const std::string& want) {
  try {
    parse(line);
    FAIL() << "accepted: " << line;
  } catch (const DriverError& error) {
    EXPECT_EQ(error.code(), DriverExit::kUsage);
    EXPECT_NE(std::string(error.what()).find(want), std::string::npos) << error.what();
  }
}

const std::string kBase = "--min-np 2 --max-np 4 --host-discovery-script /d.sh";

TEST(DriverOptions, ReadsItsFlagsAndPstrainsOutputAndSplit) {
  const DriverOptions options = parse(
      "--min-np 3 --max-np 6 --host-discovery-script /d.sh --discovery-interval 2.5 --max-restarts 4 "
      "--elastic-timeout 30 --mca btl_tcp_if_include lo -- --data-dir D --output-dir /runs/a "
      "--num-pservers 2 --passes 3");
  EXPECT_EQ(options.limits.min_np, 3);
  EXPECT_EQ(options.limits.max_np, 6);
  EXPECT_EQ(options.limits.max_restarts, 4);
  EXPECT_EQ(options.limits.elastic_timeout_s, 30);
  EXPECT_EQ(options.discovery_interval_s, 2.5);
  EXPECT_EQ(options.output_dir, "/runs/a");
  EXPECT_EQ(options.limits.rule.fixed_pservers, 2);
  EXPECT_EQ(options.pstrain, "/opt/pstrain/bin/pstrain");                                   // beside the driver
  EXPECT_EQ(options.pstrain_flags, words("--data-dir D --output-dir /runs/a --passes 3"));  // split is the driver's
  EXPECT_EQ(options.mca.size(), 1u);
}

TEST(DriverOptions, OutputDirAndModeMayComeFromTheEnvironment) {
  const DriverOptions options =
      parse(kBase + " -- --data-dir D", {{"PSTRAIN_OUTPUT_DIR", "/runs/b"}, {"PSTRAIN_MODE", "allreduce"}});
  EXPECT_EQ(options.output_dir, "/runs/b");
  EXPECT_TRUE(options.limits.rule.no_servers);
}

TEST(DriverOptions, BadInputIsOneClearUsageError) {
  expect_usage_error("--min-np 5 --max-np 4 --host-discovery-script /d.sh -- --output-dir o",
                     "--min-np 5 is above --max-np 4");
  expect_usage_error(kBase + " -- --data-dir D", "--elastic needs pstrain's --output-dir");
  expect_usage_error(kBase + " -- --output-dir o --resume auto", "do not pass --resume");
  expect_usage_error("--max-np 4 --host-discovery-script /d.sh -- --output-dir o", "--min-np A is required");
  expect_usage_error("--min-np 1 --max-np 4 -- --output-dir o", "--host-discovery-script S is required");
  expect_usage_error("--min-np two --max-np 4 --host-discovery-script /d.sh -- --output-dir o", "whole number");
  expect_usage_error(kBase + " --discovery-interval 0 -- --output-dir o", "--discovery-interval needs");
  expect_usage_error(kBase + " --pserver-ratio 1 -- --output-dir o", "between 0 and 1");
  expect_usage_error(kBase + " --bogus -- --output-dir o", "unknown flag '--bogus'");
  expect_usage_error(kBase + " --max-restarts", "--max-restarts needs a value");
  expect_usage_error("--min-np 2 --max-np 8 --host-discovery-script /d.sh -- --output-dir o --num-pservers 2",
                     "--num-pservers 2 needs at least 3 ranks");
  expect_usage_error(kBase + " -- --output-dir o --mode allreduce --num-pservers 1", "no parameter servers");
}

std::string joined(const std::vector<std::string>& command) {
  std::string text;
  for (const auto& word : command) text += word + " ";
  return text;
}

TEST(MpirunCommand, PlacesRanksSequentiallyAndLeavesTheSplitToPstrainsSizingRule) {
  const DriverOptions options = parse(kBase + " -- --output-dir /o --num-pservers -1 --passes 2");
  EXPECT_FALSE(options.limits.rule.fixed_pservers);
  const World world = plan_world({{"localhost", 3}, {"b", 1}}, 4, options.limits.rule);
  EXPECT_EQ(sequential_hostfile(world, "vm"), "vm\nb\nvm\nvm\n");
  const std::string line = joined(mpirun_command(options, world, "/o/elastic/launch-1.hosts", {"PSTRAIN_SEED"}));
  EXPECT_EQ(line.rfind("mpirun --hostfile /o/elastic/launch-1.hosts --map-by seq -np 4 --bind-to none", 0), 0u) << line;
  EXPECT_NE(line.find("--mca osc sm,pt2pt"), std::string::npos) << line;
  EXPECT_NE(line.find("-x PSTRAIN_SEED /opt/pstrain/bin/pstrain --output-dir /o --passes 2 --num-pservers -1 "
                      "--resume auto --checkpoint-every-seconds 60 --progress-every-s 1"),
            std::string::npos)
      << line;
}

TEST(MpirunCommand, UsersCountOrRatioIsPassedAsTheCountAtEverySize) {
  const DriverOptions fixed = parse(kBase + " -- --output-dir /o --num-pservers=1");
  const DriverOptions ratio = parse(kBase + " --pserver-ratio 0.25 -- --output-dir /o");
  for (const int ranks : {2, 4}) {
    const World world = plan_world({{"a", ranks}}, ranks, fixed.limits.rule);
    EXPECT_NE(joined(mpirun_command(fixed, world, "/h", {})).find(" --num-pservers 1 --resume"), std::string::npos);
  }
  const World eight = plan_world({{"a", 4}, {"b", 4}}, 8, ratio.limits.rule);
  const std::string line = joined(mpirun_command(ratio, eight, "/h", {}));
  EXPECT_NE(line.find(" --num-pservers 2 --resume"), std::string::npos) << line;
  EXPECT_EQ(line.find("--num-pservers -1"), std::string::npos) << line;
}

TEST(MpirunCommand, UsersCheckpointIntervalWinsAndOneRankHasNoServers) {
  const DriverOptions options = parse(
      "--min-np 1 --max-np 1 --host-discovery-script /d.sh --tcp -- --output-dir /o "
      "--checkpoint-every-seconds 5 --progress-every-s 3");
  const auto command = mpirun_command(options, plan_world({{"a", 2}}, 1, options.limits.rule), "/h", {});
  EXPECT_EQ(std::count(command.begin(), command.end(), "--checkpoint-every-seconds"), 1);
  EXPECT_EQ(std::count(command.begin(), command.end(), "--progress-every-s"), 1);
  EXPECT_EQ(std::count(command.begin(), command.end(), "--num-pservers"), 0);
  EXPECT_NE(std::find(command.begin(), command.end(), "tcp,self"), command.end());
}

}  // namespace
}  // namespace pstrain::launch
