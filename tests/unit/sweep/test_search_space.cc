#include "sweep/search_space.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace pstrain::sweep {
namespace {

// Parses `text` and returns the error message, failing the test when it parses or the code is not kUsage.
std::string usage_error(const std::string& text) {
  try {
    parse_search_space(text, "space.ini");
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "parsed without error:\n" << text;
  return "";
}

TEST(SearchSpace, ParsesAllSectionsCommentsAndDistributions) {
  const SearchSpace space = parse_search_space(R"(# a sweep
[fixed]            # flags passed to every run
passes = 2
--hidden = 64,32
[grid]
lr = 0.01 | 0.05 | 0.1
optimizer = momentum | adam
[random]
weight-decay = loguniform(0.0001, 0.1)
batch-size = choice(32 | 64 | 128)
momentum = uniform(0.8, 0.99)
seed = int(1, 1000)
)",
                                               "space.ini");
  ASSERT_EQ(space.fixed.size(), 2u);
  EXPECT_EQ(space.fixed[0].flag, "passes");
  EXPECT_EQ(space.fixed[0].value, "2");
  EXPECT_EQ(space.fixed[1].flag, "hidden");  // the leading "--" is accepted and dropped
  EXPECT_EQ(space.fixed[1].value, "64,32");
  ASSERT_EQ(space.grid.size(), 2u);
  EXPECT_EQ(space.grid[0].values, (std::vector<std::string>{"0.01", "0.05", "0.1"}));
  EXPECT_EQ(space.grid[0].line, 6);
  EXPECT_EQ(space.grid[1].values, (std::vector<std::string>{"momentum", "adam"}));
  ASSERT_EQ(space.random.size(), 4u);
  EXPECT_EQ(space.random[0].distribution, Distribution::kLogUniform);
  EXPECT_DOUBLE_EQ(space.random[0].lo, 0.0001);
  EXPECT_DOUBLE_EQ(space.random[0].hi, 0.1);
  EXPECT_EQ(space.random[1].distribution, Distribution::kChoice);
  EXPECT_EQ(space.random[1].choices, (std::vector<std::string>{"32", "64", "128"}));
  EXPECT_EQ(space.random[2].distribution, Distribution::kUniform);
  EXPECT_EQ(space.random[3].distribution, Distribution::kInt);
  EXPECT_EQ(space.random[3].int_lo, 1);
  EXPECT_EQ(space.random[3].int_hi, 1000);
}

TEST(SearchSpace, UnknownFlagNamesTheLine) {
  const std::string message = usage_error("[grid]\nlr = 0.1 | 0.2\nlearning-rate = 1 | 2\n");
  EXPECT_NE(message.find("space.ini:3"), std::string::npos) << message;
  EXPECT_NE(message.find("'learning-rate' is not a pstrain flag"), std::string::npos) << message;
}

TEST(SearchSpace, FlagInTwoSectionsIsAnError) {
  const std::string message = usage_error("[fixed]\nlr = 0.1\n[grid]\nlr = 0.1 | 0.2\n");
  EXPECT_NE(message.find("space.ini:4"), std::string::npos) << message;
  EXPECT_NE(message.find("line 2"), std::string::npos) << message;
}

TEST(SearchSpace, EmptySpaceAndEmptyValuesAreErrors) {
  EXPECT_NE(usage_error("# nothing\n").find("empty search space"), std::string::npos);
  EXPECT_NE(usage_error("[fixed]\npasses = 2\n").find("empty search space"), std::string::npos);
  EXPECT_NE(usage_error("[grid]\nlr =\n").find("empty value list"), std::string::npos);
  EXPECT_NE(usage_error("[grid]\nlr = 0.1 | | 0.2\n").find("empty value"), std::string::npos);
  EXPECT_NE(usage_error("[grid]\nlr = 0.1 |\n").find("empty value"), std::string::npos);
  EXPECT_NE(usage_error("[random]\nbatch-size = choice()\n").find("empty value"), std::string::npos);
}

TEST(SearchSpace, ContradictoryBoundsAreErrors) {
  EXPECT_NE(usage_error("[random]\nlr = uniform(0.5, 0.1)\n").find("needs lo < hi"), std::string::npos);
  EXPECT_NE(usage_error("[random]\nlr = loguniform(0.1, 0.1)\n").find("needs lo < hi"), std::string::npos);
  EXPECT_NE(usage_error("[random]\nlr = loguniform(0, 0.1)\n").find("positive bounds"), std::string::npos);
  EXPECT_NE(usage_error("[random]\nlr = loguniform(-1, 0.1)\n").find("positive bounds"), std::string::npos);
  EXPECT_NE(usage_error("[random]\nseed = int(9, 3)\n").find("needs lo < hi"), std::string::npos);
  EXPECT_NE(usage_error("[random]\nlr = normal(0, 1)\n").find("unknown distribution"), std::string::npos);
  EXPECT_NE(usage_error("[random]\nseed = int(1.5, 3)\n").find("not an integer"), std::string::npos);
}

TEST(SearchSpace, ToolOwnedFlagsAreRefused) {
  EXPECT_NE(usage_error("[grid]\ndata-dir = a | b\n").find("set by pstrain-sweep"), std::string::npos);
  EXPECT_NE(usage_error("[fixed]\noutput-dir = a\n[grid]\nlr = 1 | 2\n").find("set by pstrain-sweep"),
            std::string::npos);
}

TEST(SearchSpace, ValuesPstrainWouldRejectAreErrorsOnTheirLine) {
  const std::string message = usage_error("[grid]\nlr = 0.1 | fast\n");
  EXPECT_NE(message.find("space.ini:2"), std::string::npos) << message;
  EXPECT_NE(usage_error("[grid]\nmode = sync | both\n").find("'both'"), std::string::npos);
  EXPECT_NE(usage_error("[fixed]\nbatch-size = 0\n[grid]\nlr = 1 | 2\n").find("batch-size"), std::string::npos);
}

TEST(SearchSpace, FlagsThatNeedEachOtherAreCheckedTogether) {
  // --lr-schedule piecewise alone is invalid (it needs --lr-points): among the [fixed] flags it is fine.
  const SearchSpace space = parse_search_space(
      "[fixed]\nlr-schedule = piecewise\nlr-points = 0,1,3\nlr-factors = 0,1,0\n[grid]\nlr = 0.1 | 0.2\n", "space.ini");
  EXPECT_EQ(space.fixed.size(), 3u);
}

TEST(SearchSpace, AValueIsBlamedOnlyWhenItBreaksFlagsThatPassWithoutIt) {
  // Decreasing points: the lr-points line is at fault, not the lr-schedule line before it.
  std::string message = usage_error(
      "[fixed]\nlr-schedule = piecewise\nlr-points = 0,3,1\nlr-factors = 0,1,0\n"
      "[grid]\nlr = 0.1 | 0.2\n");
  EXPECT_NE(message.find("space.ini:3"), std::string::npos) << message;
  EXPECT_NE(message.find("increasing"), std::string::npos) << message;
  // A [grid] value that clashes with the [fixed] flags names its own line.
  message = usage_error("[fixed]\nlr-points = 0,1,3\nlr-factors = 0,1,0\n[grid]\nlr-schedule = piecewise | cosine\n");
  EXPECT_NE(message.find("space.ini:5"), std::string::npos) << message;
  // Two bad [fixed] lines: each is blamed on its own line.
  message = usage_error("[fixed]\nlr = -1\nmomentum = 2\n[grid]\nbatch-size = 32 | 64\n");
  EXPECT_TRUE(message.find("space.ini:2") != std::string::npos || message.find("space.ini:3") != std::string::npos)
      << message;
}

TEST(SearchSpace, FixedFlagsCompletedByAGridValueAreNotAnError) {
  // piecewise without points is invalid alone; every [grid] value of --lr-points completes it.
  const SearchSpace space =
      parse_search_space("[fixed]\nlr-schedule = piecewise\nlr-factors = 0,1,0\n[grid]\nlr-points = 0,1,3 | 0,2,3\n",
                         "space.ini");
  EXPECT_EQ(space.grid.size(), 1u);
}

TEST(SearchSpace, ShippedSeedSweepParsesIntoThirtyTwoSets) {
  const SearchSpace space = load_search_space(PSTRAIN_EXAMPLES_DIR "/seed-sweep.ini");
  std::size_t sets = 1;
  for (const GridEntry& entry : space.grid) sets *= entry.values.size();
  EXPECT_EQ(sets, 32u);
}

TEST(SearchSpace, MalformedLinesAreErrors) {
  EXPECT_NE(usage_error("lr = 1 | 2\n").find("before any"), std::string::npos);
  EXPECT_NE(usage_error("[sweep]\nlr = 1\n").find("unknown section"), std::string::npos);
  EXPECT_NE(usage_error("[grid]\nlr 0.1\n").find("expected 'flag = value'"), std::string::npos);
  EXPECT_NE(usage_error("[fixed]\nlr = 0.1 | 0.2\n").find("one value"), std::string::npos);
}

}  // namespace
}  // namespace pstrain::sweep
