// The synthetic generator: the same bits for the same seed however lines are cut into blocks, every line valid
// Criteo format, multi-hot bags where documented, labels that follow the planted probabilities; the default options
// give the first version's lines (pinned), a flatter Zipf exponent more distinct ids, and a growing id space
// (new_ids_every) changes exactly the transient ranks' ids, one generation every N lines, smoothly.
#include <gtest/gtest.h>

#include <unordered_set>

#include "core/error.h"
#include "data/ctr/criteo.h"
#include "data/ctr/synthetic_ctr.h"

namespace pstrain::data::ctr {
namespace {

// 64-bit FNV-1a of a text: a checksum to pin lines by.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return hash;
}

// Distinct ids per field over lines [0, count), counted exactly.
std::vector<std::size_t> distinct_ids(const SyntheticCtr& generator, std::uint64_t count) {
  CriteoParseOptions options;
  options.file = "synthetic";
  const CriteoBlock block = parse_criteo_block(generator.text(0, count), 0, options);
  std::vector<std::size_t> distinct;
  for (std::size_t f = 0; f < kCriteoFields; ++f) {
    const auto& values = block.columns.values[f];
    distinct.push_back(std::unordered_set<std::uint64_t>(values.begin(), values.end()).size());
  }
  return distinct;
}

TEST(SyntheticCtr, DefaultOptionsGiveTheFirstVersionsLines) {
  // Pinned from the generator before options existed (commit 1c35f85): `pstrain-data synthetic-ctr --lines 2000
  // --seed S --text-output F` for seeds 1 and 42, FNV-1a 64 of F's bytes (584,584 and 582,917 bytes).
  EXPECT_EQ(fnv1a(SyntheticCtr(1).text(0, 2000)), 0xd5237f16bfda9047ull);
  EXPECT_EQ(fnv1a(SyntheticCtr(42).text(0, 2000)), 0x6a5c44d251480a9full);
  SyntheticCtrOptions stated;
  stated.zipf_exponent = 1.1;
  stated.new_ids_every = 0;
  stated.new_id_share = 0.5;
  EXPECT_EQ(fnv1a(SyntheticCtr(1, stated).text(0, 2000)), 0xd5237f16bfda9047ull);
}

TEST(SyntheticCtr, SmallerZipfExponentGivesMoreDistinctIdsPerField) {
  SyntheticCtrOptions flat;
  flat.zipf_exponent = 0.5;
  const std::vector<std::size_t> steep = distinct_ids(SyntheticCtr(3), 3000);
  const std::vector<std::size_t> flatter = distinct_ids(SyntheticCtr(3, flat), 3000);
  std::size_t steep_total = 0, flat_total = 0;
  for (std::size_t f = 0; f < kCriteoFields; ++f) {
    steep_total += steep[f];
    flat_total += flatter[f];
    // Fields of 1,000 values or more (C1 C3 C4 C7 C10-C13 C15 C16 C18 C19 C21 C24 C26): not saturated in 3,000 lines.
    if (kSyntheticCardinalities[f] >= 1000) {
      EXPECT_GT(flatter[f], steep[f]) << "C" << f + 1;
    }
  }
  EXPECT_GT(flat_total, 2 * steep_total);
}

TEST(SyntheticCtr, ExponentOneLiesBetweenItsNeighbours) {
  // S = 1 draws ranks log-uniformly (the power form divides by zero there): its distinct ids lie between those of
  // S = 0.9 and S = 1.1 on the same lines, where a broken limit would give one id or every id.
  const auto total = [](double exponent) {
    SyntheticCtrOptions options;
    options.zipf_exponent = exponent;
    std::size_t sum = 0;
    for (const std::size_t distinct : distinct_ids(SyntheticCtr(4, options), 3000)) sum += distinct;
    return sum;
  };
  const std::size_t flatter = total(0.9), one = total(1), steeper = total(1.1);
  EXPECT_GT(flatter, one);
  EXPECT_GT(one, steeper);
}

TEST(SyntheticCtr, OptionsOutOfRangeAreRefusedAsUsageErrors) {
  for (const double exponent : {0.0, -1.0, 10.5}) {
    SyntheticCtrOptions options;
    options.zipf_exponent = exponent;
    try {
      SyntheticCtr generator(1, options);
      ADD_FAILURE() << "exponent " << exponent << " accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(error.what()).find("Zipf exponent must be in (0, 10]"), std::string::npos);
    }
  }
  for (const double share : {0.0, 1.5}) {
    SyntheticCtrOptions options;
    options.new_ids_every = 10;
    options.new_id_share = share;
    EXPECT_THROW(SyntheticCtr(1, options), Error) << "share " << share;
  }
  SyntheticCtrOptions edges;
  edges.zipf_exponent = 10;
  edges.new_ids_every = 1;
  edges.new_id_share = 1;
  EXPECT_FALSE(SyntheticCtr(1, edges).text(0, 10).empty());
}

TEST(SyntheticCtr, TransientRanksChangeIdEveryGenerationStableRanksNever) {
  constexpr std::uint64_t kEvery = 1000;
  SyntheticCtrOptions options;
  options.new_ids_every = kEvery;
  options.new_id_share = 0.3;
  const SyntheticCtr growing(6, options), fixed(6);
  constexpr std::uint64_t kRanks = 20000;
  std::uint64_t transient = 0;
  for (std::uint64_t rank = 1; rank <= kRanks; ++rank) {
    EXPECT_FALSE(fixed.transient(2, rank));
    if (growing.transient(2, rank)) {
      ++transient;
      // Lines N apart are in consecutive generations; each generation has its own id.
      EXPECT_NE(growing.id(2, rank, 0), growing.id(2, rank, kEvery)) << "rank " << rank;
      EXPECT_NE(growing.id(2, rank, 7 * kEvery), growing.id(2, rank, 8 * kEvery)) << "rank " << rank;
      EXPECT_NE(growing.id(2, rank, 0), fixed.id(2, rank, 0)) << "rank " << rank;
    } else {
      EXPECT_EQ(growing.id(2, rank, 0), fixed.id(2, rank, 0)) << "rank " << rank;
      EXPECT_EQ(growing.id(2, rank, 123456789), fixed.id(2, rank, 0)) << "rank " << rank;
    }
  }
  // Binomial(20000, 0.3): standard deviation 0.0032 of a share.
  EXPECT_NEAR(static_cast<double>(transient) / kRanks, 0.3, 0.015);
}

TEST(SyntheticCtr, TransientIdsChangeOncePerNLinesAtStaggeredLines) {
  constexpr std::uint64_t kEvery = 100;
  SyntheticCtrOptions options;
  options.new_ids_every = kEvery;
  const SyntheticCtr generator(8, options);
  std::vector<std::uint64_t> changes_at(kEvery, 0);
  std::uint64_t transient = 0;
  for (std::uint64_t rank = 1; rank <= 5000; ++rank) {
    if (!generator.transient(11, rank)) continue;
    ++transient;
    std::uint64_t changes = 0;
    for (std::uint64_t line = 500; line < 500 + kEvery; ++line) {
      if (generator.id(11, rank, line) != generator.id(11, rank, line + 1)) {
        ++changes;
        ++changes_at[line - 500];
      }
    }
    EXPECT_EQ(changes, 1u) << "rank " << rank << ": one new id in any N consecutive lines";
  }
  // Smooth churn: about transient / N ranks change at each line, none all at once.
  const double mean = static_cast<double>(transient) / kEvery;
  for (std::uint64_t i = 0; i < kEvery; ++i) EXPECT_LT(static_cast<double>(changes_at[i]), 3 * mean) << "line " << i;
}

TEST(SyntheticCtr, GrowingIdLinesAreTheSameWhateverTheBlocks) {
  SyntheticCtrOptions options;
  options.new_ids_every = 50;
  const SyntheticCtr a(11, options), b(11, options);
  const std::string whole = a.text(0, 400);
  EXPECT_EQ(whole, b.text(0, 123) + b.text(123, 200) + b.text(323, 77));
  EXPECT_NE(whole, SyntheticCtr(11).text(0, 400));
  // More distinct ids than the fixed id space on the same lines: transient ranks seen in several generations.
  const std::vector<std::size_t> growing = distinct_ids(a, 3000), fixed = distinct_ids(SyntheticCtr(11), 3000);
  EXPECT_GT(growing[8], fixed[8]);  // C9: 3 values, saturated at once without new ids
}

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
