// The synthetic generator: the same bits for the same seed however lines are cut into blocks, every line valid
// Criteo format, multi-hot bags where documented, labels that follow the planted probabilities.
#include <gtest/gtest.h>

#include "data/ctr/criteo.h"
#include "data/ctr/synthetic_ctr.h"

namespace pstrain::data::ctr {
namespace {

TEST(SyntheticCtr, SameSeedSameLinesWhateverTheBlocks) {
  const SyntheticCtr a(42), b(42), other(43);
  const std::string whole = a.text(1000, 300);
  EXPECT_EQ(whole, b.text(1000, 137) + b.text(1137, 163));
  EXPECT_NE(whole, other.text(1000, 300));
}

TEST(SyntheticCtr, LinesParseAsCriteoWithMultiHotAndEmptyBags) {
  const SyntheticCtr generator(5);
  const std::string text = generator.text(0, 2000);
  CriteoParseOptions options;
  options.file = "synthetic";
  const CriteoBlock block = parse_criteo_block(text, 0, options);
  ASSERT_EQ(block.columns.samples, 2000u);
  std::vector<std::uint64_t> longest(kCriteoFields, 0), empty(kCriteoFields, 0);
  for (std::size_t f = 0; f < kCriteoFields; ++f) {
    const auto& offsets = block.columns.offsets[f];
    for (std::size_t s = 0; s < 2000; ++s) {
      longest[f] = std::max(longest[f], offsets[s + 1] - offsets[s]);
      empty[f] += offsets[s + 1] == offsets[s];
    }
  }
  for (const std::size_t multi : {5, 13, 23}) EXPECT_EQ(longest[multi], 5u) << "C" << multi + 1;
  EXPECT_EQ(longest[0], 1u);
  EXPECT_GT(empty[18], 400u);  // C19: empty in 30% of lines
  EXPECT_EQ(empty[0], 0u);
  // C9 has 3 values, C3 about 10 million: few distinct ids in one, many in the other.
  HyperLogLog c9, c3;
  for (const auto id : block.columns.values[8]) c9.add(id);
  for (const auto id : block.columns.values[2]) c3.add(id);
  EXPECT_LE(c9.estimate(), 3.5);
  EXPECT_GT(c3.estimate(), 500);
  // Some lines have negative I2, as Criteo's.
  bool negative = false;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = text.find('\n', begin);
    const std::string_view line(text.data() + begin, end - begin);
    const std::size_t second_tab = line.find('\t', line.find('\t') + 1);
    negative |= line[second_tab + 1] == '-';
    begin = end + 1;
  }
  EXPECT_TRUE(negative);
}

TEST(SyntheticCtr, TruthMatchesTheTextsLabelsAndPredicts) {
  const SyntheticCtr generator(9);
  const std::string text = generator.text(500, 1000);
  std::size_t begin = 0;
  for (std::uint64_t i = 500; i < 1500; ++i) {
    EXPECT_EQ(text[begin] - '0', generator.truth(i).label) << "line " << i;
    begin = text.find('\n', begin) + 1;
  }
  const BayesMetrics bayes = bayes_metrics(generator, 0, 20000);
  EXPECT_GT(bayes.auc, 0.7);  // a model with signal, not a coin
  EXPECT_LT(bayes.auc, 0.95);
  EXPECT_GT(bayes.click_rate, 0.1);
  EXPECT_LT(bayes.click_rate, 0.5);
}

}  // namespace
}  // namespace pstrain::data::ctr
