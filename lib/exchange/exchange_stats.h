#pragma once
// What an exchange measures per pass, whatever the mode: time spent in each part of its step and the staleness
// of the gradients it had applied. The trainer loop sums them over the trainers at the end of every pass.
#include <array>
#include <cstddef>
#include <cstdint>

namespace pstrain::exchange {

// Staleness of applied gradients: how many updates the shard had applied between the version a gradient was
// computed on and the moment it was applied.
struct StalenessStats {
  static constexpr std::size_t kBuckets = 64;  // the last bucket holds everything >= 63
  std::array<std::int64_t, kBuckets> histogram{};
  std::int64_t count = 0;
  std::int64_t sum = 0;
  std::int64_t max = 0;
  void record(std::int64_t staleness);
  double mean() const { return count ? static_cast<double>(sum) / static_cast<double>(count) : 0.0; }
  std::int64_t percentile(double fraction) const;
};

struct ExchangeTimers {
  double gate_seconds = 0;       // ssp: waiting for the slowest trainer to come within the staleness bound
  double push_seconds = 0;       // putting gradients (and, async, waiting for the slot to be free)
  double sync_seconds = 0;       // barriers: waiting for the other trainers and the servers' update
  double pull_seconds = 0;       // getting parameters
  double allreduce_seconds = 0;  // allreduce: agreeing on the step and summing the gradients
  double update_seconds = 0;     // local and allreduce: the trainer's own optimizer step
};

// Lookups of tables keyed by the raw id (ps/keyed_rows.h) in this pass's training batches, and those that fell on
// a default row (ids without a row of their own). Doubles: the pass's agreement reduces them as its other figures.
struct KeyedLookupCounts {
  double lookups = 0;
  double on_default_row = 0;
  double resolve_seconds = 0;  // finding their rows (part of the pull time)
};

// What the servers' keyed tables hold and did since the run began (resumes included), summed over tables and
// servers, as of the last meeting.
struct KeyedRowCounts {
  std::int64_t held = 0;
  std::int64_t admitted = 0;
  std::int64_t evicted = 0;
  std::int64_t refused = 0;  // ids that qualified for a row at a meeting whose rows were all seen in it
  std::int64_t dropped = 0;  // async: row gradients dropped, the row given to another id since it was read
};

}  // namespace pstrain::exchange
