#include "report/auc_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace pstrain::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

AucHistogram::AucHistogram(std::size_t bins) : bins_(bins), counts_(2 * bins, 0) {
  PSTRAIN_ASSERT(bins > 0, "an AUC histogram of 0 bins");
}

void AucHistogram::add(std::span<const float> logits, std::span<const std::int32_t> labels) {
  PSTRAIN_ASSERT(logits.size() == labels.size(), logits.size(), " logits for ", labels.size(), " labels");
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if ((labels[i] != 0 && labels[i] != 1) || std::isnan(logits[i])) {
      throw Error(ExitCode::kInputData, cat("test sample ", i, " of the batch has label ", labels[i], " and logit ",
                                            logits[i], ": the AUC needs labels 0 and 1 and finite predictions"));
    }
    // The bin of the probability, computed from the logit so that it is monotone in it.
    const double probability = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[i])));
    const auto bin = std::min(bins_ - 1, static_cast<std::size_t>(probability * static_cast<double>(bins_)));
    ++counts_[static_cast<std::size_t>(labels[i]) * bins_ + bin];
  }
}

void AucHistogram::merge(const AucHistogram& other) {
  PSTRAIN_ASSERT(other.bins_ == bins_, "merging AUC histograms of ", other.bins_, " and ", bins_, " bins");
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

double AucHistogram::auc() const {
  unsigned __int128 twice_right = 0;
  std::uint64_t negatives_below = 0;
  std::uint64_t positives = 0;
  for (std::size_t bin = 0; bin < bins_; ++bin) {
    const std::uint64_t negatives = counts_[bin];
    const std::uint64_t clicks = counts_[bins_ + bin];
    twice_right += static_cast<unsigned __int128>(clicks) * (2 * negatives_below + negatives);
    negatives_below += negatives;
    positives += clicks;
  }
  if (positives == 0 || negatives_below == 0) return kNaN;
  const auto pairs = static_cast<long double>(static_cast<unsigned __int128>(positives) * negatives_below);
  return static_cast<double>(static_cast<long double>(twice_right) / (2.0L * pairs));
}

double AucHistogram::error_bound() const {
  unsigned __int128 tied = 0;
  std::uint64_t negatives = 0;
  std::uint64_t positives = 0;
  for (std::size_t bin = 0; bin < bins_; ++bin) {
    tied += static_cast<unsigned __int128>(counts_[bin]) * counts_[bins_ + bin];
    negatives += counts_[bin];
    positives += counts_[bins_ + bin];
  }
  if (positives == 0 || negatives == 0) return kNaN;
  const auto pairs = static_cast<long double>(static_cast<unsigned __int128>(positives) * negatives);
  return static_cast<double>(static_cast<long double>(tied) / (2.0L * pairs));
}

}  // namespace pstrain::report
