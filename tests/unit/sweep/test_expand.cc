#include "sweep/expand.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"

namespace pstrain::sweep {
namespace {

const char* kGridSpace = R"([fixed]
passes = 2
[grid]
lr = 0.01 | 0.05 | 0.1
optimizer = momentum | adam
hidden = 32 | 64,32
)";

std::string value(const HyperparameterSet& set, const std::string& flag) {
  for (const auto& [name, v] : set.flags) {
    if (name == flag) return v;
  }
  return "<absent>";
}

TEST(ExpandGrid, IsTheCartesianProductLastEntryFastest) {
  const auto sets = expand_grid(parse_search_space(kGridSpace, "s"));
  ASSERT_EQ(sets.size(), 12u);
  EXPECT_EQ(sets.front().id, 1);
  EXPECT_EQ(sets.back().id, 12);
  EXPECT_EQ(sets[0].flags, (Flags{{"passes", "2"}, {"lr", "0.01"}, {"optimizer", "momentum"}, {"hidden", "32"}}));
  EXPECT_EQ(sets[1].flags, (Flags{{"passes", "2"}, {"lr", "0.01"}, {"optimizer", "momentum"}, {"hidden", "64,32"}}));
  EXPECT_EQ(sets[2].flags, (Flags{{"passes", "2"}, {"lr", "0.01"}, {"optimizer", "adam"}, {"hidden", "32"}}));
  EXPECT_EQ(sets[11].flags, (Flags{{"passes", "2"}, {"lr", "0.1"}, {"optimizer", "adam"}, {"hidden", "64,32"}}));
  std::set<std::string> distinct;
  for (const auto& set : sets) distinct.insert(value(set, "lr") + value(set, "optimizer") + value(set, "hidden"));
  EXPECT_EQ(distinct.size(), 12u);
}

TEST(ExpandGrid, RefusesRandomEntries) {
  const auto space = parse_search_space("[grid]\nlr = 0.1 | 0.2\n[random]\nmomentum = uniform(0.8, 0.9)\n", "s");
  EXPECT_THROW(expand_grid(space), Error);
}

const char* kRandomSpace = R"([fixed]
passes = 3
[grid]
optimizer = sgd | momentum | adam
[random]
lr = loguniform(0.001, 0.1)
momentum = uniform(0.8, 0.99)
seed = int(1, 5)
batch-size = choice(32 | 64 | 128)
)";

TEST(ExpandRandom, IsDeterministicFromTheSeed) {
  const auto space = parse_search_space(kRandomSpace, "s");
  const auto a = expand_random(space, 20, 42);
  const auto b = expand_random(space, 20, 42);
  const auto c = expand_random(space, 20, 43);
  ASSERT_EQ(a.size(), 20u);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].flags, b[i].flags);
  bool differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) differs |= a[i].flags != c[i].flags;
  EXPECT_TRUE(differs);
  // The mapping is ours, not the standard library's: pin the first draw so a change is noticed.
  // mt19937_64 itself is fully specified by the standard, so these hold on every platform.
  EXPECT_EQ(a[0].flags, (Flags{{"passes", "3"},
                               {"optimizer", "adam"},
                               {"lr", "0.0189698"},
                               {"momentum", "0.942908"},
                               {"seed", "1"},
                               {"batch-size", "128"}}));
}

TEST(ExpandRandom, DrawsStayInRangeAndCoverTheChoices) {
  const auto sets = expand_random(parse_search_space(kRandomSpace, "s"), 300, 7);
  std::set<std::string> optimizers, batches, seeds;
  double lr_lo = 1, lr_hi = 0;
  for (const auto& set : sets) {
    const double lr = std::stod(value(set, "lr"));
    const double momentum = std::stod(value(set, "momentum"));
    EXPECT_GE(lr, 0.001);
    EXPECT_LE(lr, 0.1);
    EXPECT_GE(momentum, 0.8);
    EXPECT_LE(momentum, 0.99);
    lr_lo = std::min(lr_lo, lr);
    lr_hi = std::max(lr_hi, lr);
    const int seed = std::stoi(value(set, "seed"));
    EXPECT_GE(seed, 1);
    EXPECT_LE(seed, 5);
    optimizers.insert(value(set, "optimizer"));
    batches.insert(value(set, "batch-size"));
    seeds.insert(value(set, "seed"));
  }
  EXPECT_EQ(optimizers.size(), 3u);
  EXPECT_EQ(batches.size(), 3u);
  EXPECT_EQ(seeds.size(), 5u);  // both ends of int(1, 5) included
  EXPECT_LT(lr_lo, 0.002);      // log-uniform reaches the low decade
  EXPECT_GT(lr_hi, 0.05);
}

TEST(ExpandRandom, RejectsNonPositiveTrials) {
  const auto space = parse_search_space(kRandomSpace, "s");
  EXPECT_THROW(expand_random(space, 0, 1), Error);
}

TEST(UnitInterval, MapsToHalfOpenUnitInterval) {
  EXPECT_EQ(unit_interval(0), 0.0);
  EXPECT_LT(unit_interval(~std::uint64_t{0}), 1.0);
  EXPECT_DOUBLE_EQ(unit_interval(std::uint64_t{1} << 63), 0.5);
}

}  // namespace
}  // namespace pstrain::sweep
