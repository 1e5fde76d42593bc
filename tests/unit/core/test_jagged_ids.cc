// core::JaggedIds: a batch's bags gathered from held samples in any order, ranges and appends, against bags kept
// as plain nested vectors.
#include <gtest/gtest.h>

#include <random>

#include "core/jagged_ids.h"

namespace pstrain::core {
namespace {

using Bags = std::vector<std::vector<std::vector<std::uint64_t>>>;  // [sample][field][id]

Bags random_bags(std::size_t samples, std::size_t fields, unsigned seed) {
  std::mt19937_64 random(seed);
  Bags bags(samples, std::vector<std::vector<std::uint64_t>>(fields));
  for (auto& sample : bags) {
    for (auto& bag : sample) {
      for (std::size_t k = random() % 4; k > 0; --k) bag.push_back(random());  // empty bags too
    }
  }
  return bags;
}

JaggedIds jagged_of(const Bags& bags, std::size_t fields) {
  JaggedIds ids;
  ids.fields = fields;
  ids.samples = bags.size();
  ids.offsets.push_back(0);
  for (std::size_t f = 0; f < fields; ++f) {
    for (const auto& sample : bags) {
      ids.values.insert(ids.values.end(), sample[f].begin(), sample[f].end());
      ids.offsets.push_back(ids.values.size());
    }
  }
  return ids;
}

void expect_bags(const JaggedIds& ids, const Bags& expected) {
  ASSERT_EQ(ids.samples, expected.size());
  ASSERT_EQ(ids.offsets.size(), ids.fields * ids.samples + 1);
  for (std::size_t s = 0; s < expected.size(); ++s) {
    for (std::size_t f = 0; f < ids.fields; ++f) {
      const auto bag = ids.bag(f, s);
      EXPECT_EQ(std::vector<std::uint64_t>(bag.begin(), bag.end()), expected[s][f]) << "sample " << s << " field " << f;
    }
  }
}

TEST(JaggedIds, GatherTakesTheListedSamplesInTheirOrderRepeatsIncluded) {
  const Bags bags = random_bags(20, 3, 1);
  const std::vector<std::uint32_t> order{7, 0, 19, 7, 3};
  Bags expected;
  for (const std::uint32_t s : order) expected.push_back(bags[s]);
  expect_bags(gather_samples(jagged_of(bags, 3), order), expected);
}

TEST(JaggedIds, RangeIsTheConsecutiveSamples) {
  const Bags bags = random_bags(20, 2, 2);
  expect_bags(sample_range(jagged_of(bags, 2), 5, 9), Bags(bags.begin() + 5, bags.begin() + 14));
  expect_bags(sample_range(jagged_of(bags, 2), 20, 0), Bags{});
}

TEST(JaggedIds, AppendPutsTheSecondSetsSamplesAfterTheFirsts) {
  const Bags first = random_bags(6, 3, 3);
  const Bags second = random_bags(9, 3, 4);
  JaggedIds joined;  // empty: takes the first set
  append_samples(joined, jagged_of(first, 3));
  append_samples(joined, jagged_of(second, 3));
  Bags expected = first;
  expected.insert(expected.end(), second.begin(), second.end());
  expect_bags(joined, expected);
  EXPECT_EQ(joined.id_count(), jagged_of(expected, 3).values.size());
}

}  // namespace
}  // namespace pstrain::core
