#pragma once
// Comparing GPU results with CPU (or reference) results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace pstrain::compute::testing {

// Relative error of every element, measured against max(|expected|, 1% of the largest |expected| in the tensor):
// a true relative error for every element of the tensor's own magnitude, while entries that cancel to nearly 0 are
// judged against the tensor's scale (fp32 sums in a different order cannot give them many correct digits). NaN
// anywhere fails. Reports the worst element.
template <typename Expected>
::testing::AssertionResult all_close(const std::vector<float>& actual, const std::vector<Expected>& expected,
                                     double tolerance = 1e-4) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  double largest = 0;
  for (const Expected value : expected) largest = std::max(largest, std::abs(static_cast<double>(value)));
  const double floor = std::max(0.01 * largest, 1e-30);
  double worst = 0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double reference = static_cast<double>(expected[i]);
    const double error = std::abs(static_cast<double>(actual[i]) - reference) / std::max(std::abs(reference), floor);
    if (!(error <= worst)) {  // NaN included
      worst = error;
      worst_index = i;
      if (std::isnan(error)) break;
    }
  }
  if (!(worst < tolerance)) {
    return ::testing::AssertionFailure() << "relative error " << worst << " >= " << tolerance << " at element "
                                         << worst_index << " of " << actual.size() << ": " << actual[worst_index]
                                         << " vs " << static_cast<double>(expected[worst_index]);
  }
  return ::testing::AssertionSuccess();
}

// Relative error of the whole tensor: ||actual - expected||_2 / ||expected||_2, for results whose single elements
// carry the rounding of long chains of fp32 sums in a backend's own order (batch norm's statistics, gradients of
// its scales), where a per-element comparison would judge the summation order rather than the arithmetic. Every
// element still counts: a wrong or missing term shows as a norm-sized error. NaN fails.
inline ::testing::AssertionResult norm_close(const std::vector<float>& actual, const std::vector<float>& expected,
                                             double tolerance = 1e-4) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  double difference = 0;
  double reference = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double d = static_cast<double>(actual[i]) - static_cast<double>(expected[i]);
    difference += d * d;
    reference += static_cast<double>(expected[i]) * expected[i];
  }
  const double error = std::sqrt(difference) / std::max(std::sqrt(reference), 1e-30);
  if (error < tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "relative error of the tensor " << error << " >= " << tolerance;
}

// Each sum against its exact (double) value, the error measured against the sum of the absolute values of its
// terms (`magnitudes`): the scale of the rounding any fp32 summation order makes. A sum that cancels to nearly 0
// has no correct relative digits in any order, so its relative error would judge the order, not the sum.
inline ::testing::AssertionResult sums_close(const std::vector<float>& actual, const std::vector<double>& exact,
                                             const std::vector<double>& magnitudes, double tolerance) {
  if (actual.size() != exact.size() || exact.size() != magnitudes.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << exact.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double error = std::abs(static_cast<double>(actual[i]) - exact[i]) / std::max(magnitudes[i], 1e-30);
    if (!(error < tolerance)) {
      return ::testing::AssertionFailure()
             << "sum " << i << ": " << actual[i] << " vs exact " << exact[i] << ", error " << error
             << " of the terms' magnitude " << magnitudes[i] << " >= " << tolerance;
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult relative_close(double actual, double expected, double tolerance = 1e-4) {
  const double error = std::abs(actual - expected) / std::max(std::abs(expected), 1e-30);
  if (error < tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << actual << " vs " << expected << ": relative error " << error;
}

}  // namespace pstrain::compute::testing
