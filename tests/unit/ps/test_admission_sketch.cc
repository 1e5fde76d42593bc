// The admission sketch against exact counts: never below them on a skewed (Zipf) stream, above them by no more
// than count-min's bound allows, saturating instead of wrapping, and its state round-tripping for checkpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "ps/admission_sketch.h"

namespace pstrain::ps {
namespace {

// `length` draws of a Zipf(1.1) law over `ids` ids, each rank mapped to a scattered 64-bit id.
std::vector<std::int64_t> zipf_stream(std::size_t ids, std::size_t length, std::uint64_t seed) {
  std::vector<double> weights(ids);
  for (std::size_t k = 0; k < ids; ++k) weights[k] = 1.0 / std::pow(static_cast<double>(k + 1), 1.1);
  std::discrete_distribution<std::size_t> law(weights.begin(), weights.end());
  std::mt19937_64 engine(seed);
  std::vector<std::int64_t> stream(length);
  for (auto& id : stream) id = static_cast<std::int64_t>(law(engine) * 2654435761ull + 17);
  return stream;
}

TEST(AdmissionSketch, NeverUndercountsAZipfStream) {
  AdmissionSketch sketch(4, 1024, 5, 2);
  std::unordered_map<std::int64_t, std::uint32_t> exact;
  for (const std::int64_t id : zipf_stream(20000, 100000, 1)) {
    const std::uint32_t count = ++exact[id];
    ASSERT_GE(sketch.add(id), std::min(count, AdmissionSketch::kMaxCount)) << "id " << id;
  }
  for (const auto& [id, count] : exact) EXPECT_GE(sketch.estimate(id), count) << "id " << id;
}

TEST(AdmissionSketch, OvercountStaysWithinTheCountMinBound) {
  // With w counters a row, an id's overcount exceeds e * N / w in one row with probability <= 1/e (Markov), in
  // all d rows with probability <= e^-d: so at most that share of ids (plus slack for a finite sample) may.
  const std::uint32_t depth = 4;
  const std::uint64_t width = 2048;
  AdmissionSketch sketch(depth, width, 8, 0);
  const auto stream = zipf_stream(50000, 200000, 2);
  std::unordered_map<std::int64_t, std::uint32_t> exact;
  for (const std::int64_t id : stream) {
    sketch.add(id);
    ++exact[id];
  }
  const double bound = std::exp(1.0) * static_cast<double>(stream.size()) / static_cast<double>(width);
  std::size_t over = 0;
  double total_error = 0;
  for (const auto& [id, count] : exact) {
    const double error = static_cast<double>(sketch.estimate(id)) - count;
    total_error += error;
    if (error > bound) ++over;
  }
  EXPECT_LE(static_cast<double>(over), (std::exp(-static_cast<double>(depth)) + 0.01) * exact.size());
  EXPECT_LE(total_error / exact.size(), bound) << "mean overcount";
  // An id never seen reads at most the bound too, for nearly all of them.
  std::size_t unseen_over = 0;
  for (std::int64_t id = 1; id <= 2000; ++id) unseen_over += sketch.estimate(-id) > bound ? 1 : 0;
  EXPECT_LE(unseen_over, 60u);
}

TEST(AdmissionSketch, SaturatesInsteadOfWrapping) {
  AdmissionSketch sketch(2, 16, 0, 0);
  for (int k = 0; k < 70000; ++k) sketch.add(3);
  EXPECT_EQ(sketch.estimate(3), AdmissionSketch::kMaxCount);
  EXPECT_EQ(sketch.add(3), AdmissionSketch::kMaxCount);
}

TEST(AdmissionSketch, CountersRoundTripAndAWrongSizeIsRefused) {
  AdmissionSketch sketch(3, 64, 1, 1);
  for (std::int64_t id = 0; id < 500; ++id) sketch.add(id % 37);
  AdmissionSketch copy(3, 64, 1, 1);
  copy.load(sketch.counters());
  for (std::int64_t id = 0; id < 100; ++id) EXPECT_EQ(copy.estimate(id), sketch.estimate(id));
  EXPECT_EQ(copy.bytes(), 3u * 64u * sizeof(std::uint16_t));
  AdmissionSketch other(3, 32, 1, 1);
  EXPECT_THROW(other.load(sketch.counters()), Error);
  EXPECT_THROW(AdmissionSketch(0, 8, 0, 0), Error);
}

// Aging: every W-th sighting halves every counter, so an id's estimate follows its recent sightings; a copy
// loaded with the sightings count halves at the same sighting as the original.
TEST(AdmissionSketch, EveryWthSightingHalvesTheCountersAndACopyHalvesInStep) {
  AdmissionSketch sketch(4, 1024, 7, 2, 100);
  for (int k = 0; k < 60; ++k) sketch.add(5);
  for (std::int64_t id = 100; id < 139; ++id) sketch.add(id);
  EXPECT_EQ(sketch.estimate(5), 60u) << "99 sightings: not halved yet";
  EXPECT_EQ(sketch.sightings(), 99u);
  AdmissionSketch copy(4, 1024, 7, 2, 100);
  copy.load(sketch.counters(), sketch.sightings());
  EXPECT_EQ(sketch.add(200), 0u + 1u);  // the 100th sighting: its count, then every counter halved
  EXPECT_EQ(sketch.estimate(5), 30u);
  EXPECT_EQ(sketch.sightings(), 0u);
  copy.add(200);
  for (std::int64_t id : {5, 100, 120, 200}) EXPECT_EQ(copy.estimate(id), sketch.estimate(id)) << id;
  for (int k = 0; k < 1000; ++k) sketch.add(1000 + k);  // ten halvings later id 5 is forgotten
  EXPECT_EQ(sketch.estimate(5), 0u);
}

TEST(AdmissionSketch, TablesCountTheSameIdInDifferentCounters) {
  AdmissionSketch a(1, 1 << 20, 4, 0);
  AdmissionSketch b(1, 1 << 20, 4, 1);
  a.add(77);
  b.add(77);
  const auto find = [](const AdmissionSketch& s) {
    const auto c = s.counters();
    return std::find(c.begin(), c.end(), 1) - c.begin();
  };
  EXPECT_NE(find(a), find(b));
}

}  // namespace
}  // namespace pstrain::ps
