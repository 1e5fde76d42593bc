#pragma once
// Progress within a pass, for people watching a console or tailing a batch log: one line every
// `interval_seconds` of the pass (steps done, samples/s, time left in the pass and in the run), none for a pass
// shorter than the interval, so a log gains a few lines per minute at most. The caller says where the pass
// stands, its clock included, so the decision is a pure function of what it is told (and testable without
// waiting). One trainer (the lead) prints.
#include <cstdint>
#include <optional>
#include <string>

namespace pstrain::report {

struct PassPosition {
  int pass = 0;                 // 0-based
  int passes = 0;               // in the whole run
  std::int64_t steps_done = 0;  // in this pass, by this trainer
  std::int64_t steps = -1;      // this trainer's steps in the pass; < 0: not known ahead (dynamic dispatch)
  double samples_done = 0;      // in this pass, by this trainer
  double seconds = 0;           // since the pass started
};

class ProgressLine {
 public:
  // interval_seconds <= 0: never a line.
  explicit ProgressLine(double interval_seconds) : interval_(interval_seconds) {}

  // After every step: the line to print when one is due, nullopt otherwise.
  std::optional<std::string> after_step(const PassPosition& position);

 private:
  double interval_;
  int pass_ = -1;        // the pass the schedule below belongs to
  double next_due_ = 0;  // seconds into that pass
};

// "42s", "3m05s", "2h07m".
std::string format_duration(double seconds);

}  // namespace pstrain::report
