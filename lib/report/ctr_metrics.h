#pragma once
// Click-through-rate metrics of a test pass, as metrics.jsonl names them: test_auc (ROC AUC, exact, ties counted
// half), test_logloss (mean binary cross-entropy), test_ne (normalized entropy: the logloss over the entropy of
// the training click rate p, -(p log p + (1-p) log(1-p)), so 1 is no better than predicting p for everyone) and
// test_calibration (mean predicted click probability over the actual click rate; 1 is calibrated).
//
// The same figures, to the bit, for any number of trainers or evaluating ranks: each rank keeps its predictions
// as one sorted run (PredictionRun); runs merge into the sorted run of the union, which depends only on the
// multiset of predictions, never on how the samples were split; the metrics are computed from that run in its
// order (AUC in exact integer arithmetic). A rank's run is plain bytes (Prediction), so the layer that gathers
// runs across ranks (MPI) ships it as it is; this folder has no MPI. Memory: 8 bytes per test sample.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "report/metrics.h"

namespace pstrain::report {

// One test sample: the model's logit (before the sigmoid: distinct logits stay distinct, where their
// probabilities could round to one float) and its label, 0 or 1.
struct Prediction {
  float logit = 0;
  std::int32_t label = 0;
};
static_assert(sizeof(Prediction) == 8, "a run is shipped between ranks as bytes");

// Sorted by logit, then label; -0 is stored as +0, so equal predictions are equal bytes and the run is canonical.
class PredictionRun {
 public:
  // Error(kInputData) naming the sample for a label other than 0 and 1 or a NaN logit (a diverged model).
  void add(std::span<const float> logits, std::span<const std::int32_t> labels);
  // Another rank's run (sorted(), as gathered): Error(kInternal) when it is not sorted.
  void merge(std::span<const Prediction> sorted_run);
  // Every rank's run at once, laid end to end in `runs` (`lengths[i]` predictions each, in any order of ranks),
  // merged in place pairwise (each prediction moved log2(runs) times, not once per run as merge() one run at a
  // time would): what the rank that gathers them does. Memory: the runs' 8 bytes per prediction, and while it
  // merges as many again for std::inplace_merge's buffer. Error(kInternal) for a run that is not sorted or lengths
  // that do not add up to the predictions.
  static PredictionRun from_runs(std::vector<Prediction> runs, std::span<const std::uint64_t> lengths);
  // The run, sorted (sorting what add() appended since the last call).
  std::span<const Prediction> sorted();
  std::size_t size() const { return predictions_.size(); }

 private:
  std::vector<Prediction> predictions_;
  std::size_t sorted_prefix_ = 0;  // predictions_[0, sorted_prefix_) is sorted
};

struct CtrMetrics {
  double auc = 0;          // NaN without both a click and a non-click
  double logloss = 0;      // NaN without samples
  double ne = 0;           // NaN unless the training click rate is in (0, 1)
  double calibration = 0;  // NaN without a click
  std::size_t samples = 0;
  std::size_t clicks = 0;
};

// ROC AUC of a sorted run: the probability that a random click scores above a random non-click, ties counting
// half, from integer counts (exact; the one rounding is the final division).
double exact_auc(std::span<const Prediction> sorted_run);
// Every metric of a sorted run; `training_click_rate` is the click rate of the training data (NE's baseline).
CtrMetrics ctr_metrics(std::span<const Prediction> sorted_run, double training_click_rate);
// test_auc, test_logloss, test_ne, test_calibration (a NaN is written as null).
void add_ctr_metrics(JsonLine& line, const CtrMetrics& metrics);
// The same figures as (metrics.jsonl name, value), in that order: what TensorBoard's scalars and the evaluation
// records take their names from.
std::vector<std::pair<std::string, double>> ctr_figures(const CtrMetrics& metrics);

}  // namespace pstrain::report
