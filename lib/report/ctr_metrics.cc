#include "report/ctr_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace pstrain::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool before(const Prediction& a, const Prediction& b) {
  return a.logit < b.logit || (a.logit == b.logit && a.label < b.label);
}

// max(x, 0) - x y + log(1 + exp(-|x|)): the cross-entropy of sigmoid(x) against y without overflow (nn/loss.h
// computes the training loss the same way; this folder does not depend on nn).
double logistic_loss(double logit, int label) {
  return std::max(logit, 0.0) - logit * label + std::log1p(std::exp(-std::abs(logit)));
}

double sigmoid(double logit) {
  const double e = std::exp(-std::abs(logit));
  return logit >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

double entropy(double p) {
  if (!(p > 0 && p < 1)) return kNaN;
  return -(p * std::log(p) + (1 - p) * std::log1p(-p));
}

}  // namespace

void PredictionRun::add(std::span<const float> logits, std::span<const std::int32_t> labels) {
  PSTRAIN_ASSERT(logits.size() == labels.size(), logits.size(), " logits for ", labels.size(), " labels");
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if (labels[i] != 0 && labels[i] != 1) {
      throw Error(ExitCode::kInputData,
                  cat("test sample ", size(), " has label ", labels[i], ": click-through metrics need labels 0 and 1"));
    }
    if (std::isnan(logits[i])) {
      throw Error(ExitCode::kInputData, cat("test sample ", size(), " has a NaN prediction (the model diverged)"));
    }
    predictions_.push_back({logits[i] == 0.0f ? 0.0f : logits[i], labels[i]});
  }
}

std::span<const Prediction> PredictionRun::sorted() {
  if (sorted_prefix_ < predictions_.size()) {
    const auto middle = predictions_.begin() + static_cast<std::ptrdiff_t>(sorted_prefix_);
    std::sort(middle, predictions_.end(), before);
    std::inplace_merge(predictions_.begin(), middle, predictions_.end(), before);
    sorted_prefix_ = predictions_.size();
  }
  return predictions_;
}

void PredictionRun::merge(std::span<const Prediction> sorted_run) {
  PSTRAIN_ASSERT(std::is_sorted(sorted_run.begin(), sorted_run.end(), before), "a run of ", sorted_run.size(),
                 " predictions to merge is not sorted");
  sorted();
  const std::size_t middle = predictions_.size();
  predictions_.insert(predictions_.end(), sorted_run.begin(), sorted_run.end());
  std::inplace_merge(predictions_.begin(), predictions_.begin() + static_cast<std::ptrdiff_t>(middle),
                     predictions_.end(), before);
  sorted_prefix_ = predictions_.size();
}

PredictionRun PredictionRun::from_runs(std::vector<Prediction> runs, std::span<const std::uint64_t> lengths) {
  // Run boundaries: run i is [bounds[i], bounds[i + 1]).
  std::vector<std::size_t> bounds{0};
  for (const std::uint64_t length : lengths) bounds.push_back(bounds.back() + static_cast<std::size_t>(length));
  PSTRAIN_ASSERT(bounds.back() == runs.size(), "runs of ", bounds.back(), " predictions in all, given ", runs.size());
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const auto first = runs.begin() + static_cast<std::ptrdiff_t>(bounds[i]);
    const auto last = runs.begin() + static_cast<std::ptrdiff_t>(bounds[i + 1]);
    PSTRAIN_ASSERT(std::is_sorted(first, last, before), "run ", i, " of ", lengths.size(), " (", lengths[i],
                   " predictions) is not sorted");
  }
  // Each pass merges neighbouring runs two by two, halving their number.
  while (bounds.size() > 2) {
    std::vector<std::size_t> merged{0};
    for (std::size_t i = 0; i + 1 < bounds.size(); i += 2) {
      const std::size_t end = i + 2 < bounds.size() ? bounds[i + 2] : bounds[i + 1];
      const auto at = [&](std::size_t place) { return runs.begin() + static_cast<std::ptrdiff_t>(place); };
      if (i + 2 < bounds.size()) std::inplace_merge(at(bounds[i]), at(bounds[i + 1]), at(end), before);
      merged.push_back(end);
    }
    bounds = std::move(merged);
  }
  PredictionRun run;
  run.predictions_ = std::move(runs);
  run.sorted_prefix_ = run.predictions_.size();
  return run;
}

double exact_auc(std::span<const Prediction> sorted_run) {
  // Twice the count of (click, non-click) pairs ranked right, ties once: 2 * below * clicks + clicks * others per
  // group of equal logits. Below 2^127 for any run that fits in memory.
  unsigned __int128 twice_right = 0;
  std::uint64_t negatives_below = 0;
  std::uint64_t positives = 0;
  for (std::size_t first = 0; first < sorted_run.size();) {
    std::uint64_t group_positives = 0;
    std::uint64_t group_negatives = 0;
    std::size_t next = first;
    for (; next < sorted_run.size() && sorted_run[next].logit == sorted_run[first].logit; ++next) {
      ++(sorted_run[next].label == 1 ? group_positives : group_negatives);
    }
    twice_right += static_cast<unsigned __int128>(group_positives) * (2 * negatives_below + group_negatives);
    negatives_below += group_negatives;
    positives += group_positives;
    first = next;
  }
  if (positives == 0 || negatives_below == 0) return kNaN;
  const auto pairs = static_cast<unsigned __int128>(positives) * negatives_below;
  return static_cast<double>(static_cast<long double>(twice_right) / (2.0L * static_cast<long double>(pairs)));
}

CtrMetrics ctr_metrics(std::span<const Prediction> sorted_run, double training_click_rate) {
  CtrMetrics metrics;
  metrics.samples = sorted_run.size();
  double loss_sum = 0;
  double probability_sum = 0;
  for (const Prediction& prediction : sorted_run) {
    loss_sum += logistic_loss(prediction.logit, prediction.label);
    probability_sum += sigmoid(prediction.logit);
    metrics.clicks += static_cast<std::size_t>(prediction.label);
  }
  const auto samples = static_cast<double>(metrics.samples);
  metrics.auc = exact_auc(sorted_run);
  metrics.logloss = metrics.samples > 0 ? loss_sum / samples : kNaN;
  metrics.ne = metrics.logloss / entropy(training_click_rate);
  metrics.calibration = metrics.clicks > 0 ? probability_sum / static_cast<double>(metrics.clicks) : kNaN;
  return metrics;
}

std::vector<std::pair<std::string, double>> ctr_figures(const CtrMetrics& metrics) {
  return {{"test_auc", metrics.auc},
          {"test_logloss", metrics.logloss},
          {"test_ne", metrics.ne},
          {"test_calibration", metrics.calibration}};
}

void add_ctr_metrics(JsonLine& line, const CtrMetrics& metrics) {
  for (const auto& [name, value] : ctr_figures(metrics)) line.add(name, value);
}

}  // namespace pstrain::report
