#include "sweep/sets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "core/error.h"
#include "temp_dir.h"

namespace pstrain::sweep {
namespace {

EnvLookup env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

std::vector<HyperparameterSet> three_sets() {
  return {{1, {{"lr", "0.1"}, {"hidden", "64,32"}}},
          {2, {{"lr", "0.2"}, {"hidden", "64,32"}}},
          {3, {{"lr", "0.3"}, {"activation", "tanh"}}}};
}

TEST(SelectSet, JobIdIsOneBased) {
  EXPECT_EQ(select_set(env({{"JOB_ID", "1"}}), 3).index, 0u);
  EXPECT_EQ(select_set(env({{"JOB_ID", "3"}}), 3).index, 2u);
  EXPECT_EQ(select_set(env({{"JOB_ID", "3"}}), 3).reason, "JOB_ID=3");
}

TEST(SelectSet, CompletionIndexAndSlurmTaskAreZeroBased) {
  EXPECT_EQ(select_set(env({{"JOB_COMPLETION_INDEX", "0"}}), 3).index, 0u);
  EXPECT_EQ(select_set(env({{"JOB_COMPLETION_INDEX", "2"}}), 3).index, 2u);
  EXPECT_EQ(select_set(env({{"SLURM_ARRAY_TASK_ID", "0"}}), 3).index, 0u);
  EXPECT_EQ(select_set(env({{"SLURM_ARRAY_TASK_ID", "1"}}), 3).index, 1u);
}

TEST(SelectSet, OutOfRangeMissingOrGarbageIsAUsageError) {
  for (const auto& values : std::vector<std::map<std::string, std::string>>{{},
                                                                            {{"JOB_ID", "0"}},
                                                                            {{"JOB_ID", "4"}},
                                                                            {{"JOB_COMPLETION_INDEX", "3"}},
                                                                            {{"SLURM_ARRAY_TASK_ID", "-1"}},
                                                                            {{"JOB_ID", "2x"}},
                                                                            {{"JOB_ID", ""}}}) {
    try {
      select_set(env(values), 3);
      ADD_FAILURE() << "no error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
    }
  }
}

TEST(SetFiles, WriteAndLoadRoundTrip) {
  testing::TempDir dir;
  write_sets(dir.path(), three_sets());
  const auto loaded = load_sets(dir.path());
  ASSERT_EQ(loaded.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(loaded[i].id, three_sets()[i].id);
    EXPECT_EQ(loaded[i].flags, three_sets()[i].flags);
  }
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "sets" / "set-0001.ini"));
  std::ifstream listing(dir.path() / "sets.txt");
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(listing, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "--lr 0.1 --hidden 64,32");  // line 0 is set 1
  EXPECT_EQ(lines[2], "--lr 0.3 --activation tanh");
}

TEST(SetFiles, SameSetsAgainIsFineDifferentSetsAreRefused) {
  testing::TempDir dir;
  write_sets(dir.path(), three_sets());
  EXPECT_NO_THROW(write_sets(dir.path(), three_sets()));
  auto other = three_sets();
  other[0].flags[0].second = "0.9";
  EXPECT_THROW(write_sets(dir.path(), other), Error);
}

TEST(SetFiles, MissingSweepIsAnInputError) {
  testing::TempDir dir;
  try {
    load_sets(dir.path());
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
  }
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(shell_quote("64,32"), "64,32");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(set_name(7), "set-0007");
}

}  // namespace
}  // namespace pstrain::sweep
