#pragma once
// An approximate ROC AUC in constant memory, for test sets too large to gather (ctr_metrics.h keeps every
// prediction for the exact figure): click and non-click counts per bin of the predicted probability, `bins` equal
// bins over [0, 1]. Counts are integers, so histograms merge exactly and the result is the same for any split of
// the samples; across ranks the counts are summed element-wise (an MPI_SUM all-reduce of counts()).
//
// Pairs in different bins are ranked exactly; pairs within one bin are counted as ties (half). Each such pair's
// true contribution lies in [0, 1], so |exact AUC - histogram AUC| <= sum_b clicks_b non_clicks_b / (2 P N) with
// P clicks and N non-clicks: error_bound() computes this bound from the counts, a guarantee, not an estimate.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pstrain::report {

class AucHistogram {
 public:
  explicit AucHistogram(std::size_t bins = std::size_t{1} << 16);

  // Labels 0 or 1 and non-NaN logits, else Error(kInputData) naming the sample.
  void add(std::span<const float> logits, std::span<const std::int32_t> labels);
  // Another histogram of as many bins (Error(kInternal) otherwise).
  void merge(const AucHistogram& other);
  // Non-click counts of every bin, then click counts: what ranks sum to merge.
  std::span<std::uint64_t> counts() { return counts_; }

  double auc() const;          // NaN without both a click and a non-click
  double error_bound() const;  // NaN likewise

 private:
  std::size_t bins_;
  std::vector<std::uint64_t> counts_;  // [label * bins + bin]
};

}  // namespace pstrain::report
