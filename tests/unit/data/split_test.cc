#include "data/split.h"

#include <gtest/gtest.h>

#include "test_files.h"

namespace pstrain::data {
namespace {

using testing::expect_error;
using testing::make_samples;

TEST(Split, NearlyEqualContiguousParts) {
  const Samples samples = make_samples(10, 1, 2, 4);
  const std::vector<Samples> parts = split_samples(samples, 4);
  ASSERT_EQ(parts.size(), 4u);
  const std::size_t sizes[4] = {3, 3, 2, 2};
  std::size_t begin = 0;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const Samples& part = parts[p];
    EXPECT_EQ(part.meta.sample_count, sizes[p]);
    ASSERT_EQ(part.labels.size(), sizes[p]);
    ASSERT_EQ(part.features.size(), sizes[p] * 2);
    EXPECT_EQ(part.meta.sample_shape, samples.meta.sample_shape);
    EXPECT_EQ(part.meta.num_classes, samples.meta.num_classes);
    for (std::size_t i = 0; i < sizes[p]; ++i) {
      EXPECT_EQ(part.labels[i], samples.labels[begin + i]);
      EXPECT_EQ(part.features[2 * i], samples.features[2 * (begin + i)]);
      EXPECT_EQ(part.features[2 * i + 1], samples.features[2 * (begin + i) + 1]);
    }
    begin += sizes[p];
  }
  EXPECT_EQ(begin, 10u);
}

TEST(Split, SizesDifferByAtMostOne) {
  for (std::size_t count : {1u, 7u, 60u, 61u, 1000u}) {
    for (std::size_t parts = 1; parts <= std::min<std::size_t>(count, 13); ++parts) {
      const std::vector<Samples> pieces = split_samples(make_samples(count), parts);
      ASSERT_EQ(pieces.size(), parts);
      std::size_t total = 0, smallest = count, largest = 0;
      for (const Samples& piece : pieces) {
        total += piece.meta.sample_count;
        smallest = std::min<std::size_t>(smallest, piece.meta.sample_count);
        largest = std::max<std::size_t>(largest, piece.meta.sample_count);
      }
      EXPECT_EQ(total, count);
      EXPECT_LE(largest - smallest, 1u) << count << " into " << parts;
    }
  }
}

TEST(Split, OnePartIsEverything) {
  const Samples samples = make_samples(5);
  const std::vector<Samples> parts = split_samples(samples, 1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].features, samples.features);
  EXPECT_EQ(parts[0].labels, samples.labels);
}

TEST(Split, MorePartsThanSamplesIsAnError) {
  expect_error([] { split_samples(make_samples(3), 4); }, ExitCode::kUsage, {"cannot split 3 samples into 4 parts"});
  expect_error([] { split_samples(make_samples(3), 0); }, ExitCode::kUsage, {"0 parts"});
}

TEST(Split, TakeFirst) {
  const Samples samples = make_samples(6, 1, 2, 4);
  const Samples subset = take_first(samples, 4);
  EXPECT_EQ(subset.meta.sample_count, 4u);
  EXPECT_EQ(subset.labels, std::vector<std::int32_t>(samples.labels.begin(), samples.labels.begin() + 4));
  EXPECT_EQ(subset.features, std::vector<float>(samples.features.begin(), samples.features.begin() + 8));
  EXPECT_EQ(take_first(samples, 6).features, samples.features);
  expect_error([&] { take_first(samples, 7); }, ExitCode::kUsage, {"first 7 samples of only 6"});
  expect_error([&] { take_first(samples, 0); }, ExitCode::kUsage, {"first 0"});
}

}  // namespace
}  // namespace pstrain::data
