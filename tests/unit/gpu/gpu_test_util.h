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

inline ::testing::AssertionResult relative_close(double actual, double expected, double tolerance = 1e-4) {
  const double error = std::abs(actual - expected) / std::max(std::abs(expected), 1e-30);
  if (error < tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << actual << " vs " << expected << ": relative error " << error;
}

}  // namespace pstrain::compute::testing
