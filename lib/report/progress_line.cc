#include "report/progress_line.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pstrain::report {

std::string format_duration(double seconds) {
  const long long total = std::llround(std::max(0.0, seconds));
  char text[32];
  if (total < 60) {
    std::snprintf(text, sizeof text, "%llds", total);
  } else if (total < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%lldh%02lldm", total / 3600, total % 3600 / 60);
  }
  return text;
}

std::optional<std::string> ProgressLine::after_step(const PassPosition& position) {
  if (interval_ <= 0) return std::nullopt;
  if (position.pass != pass_) {  // a new pass: the first line once it has lasted one interval
    pass_ = position.pass;
    next_due_ = interval_;
  }
  if (position.seconds < next_due_ || position.steps_done <= 0) return std::nullopt;
  // The next line one interval after this one (not after it was due): a slow step delays, never bunches, lines.
  next_due_ = position.seconds + interval_;

  const double samples_per_sec = position.samples_done / position.seconds;
  // Passes are numbered from 0 everywhere (pass-00000/, metrics.jsonl's "pass", the per-pass log line): "pass 1 of
  // 0..2" is the second of three.
  std::string line = "pass " + std::to_string(position.pass) + " of 0.." + std::to_string(position.passes - 1) +
                     " step " + std::to_string(position.steps_done);
  if (position.steps < 0) {  // dynamic dispatch: the pass ends when the chunks run out, no estimate
    char rate[64];
    std::snprintf(rate, sizeof rate, ", %.0f samples/s", samples_per_sec);
    return line + rate;
  }
  const auto steps = static_cast<double>(std::max<std::int64_t>(position.steps, 1));
  const auto done = static_cast<double>(std::min(position.steps_done, position.steps));
  const double seconds_per_step = position.seconds / static_cast<double>(position.steps_done);
  const double passes_after = std::max(0, position.passes - position.pass - 1);
  // Later passes take as many steps as this one (after a resume this one may be shorter: an underestimate);
  // evaluation and checkpoints are not counted.
  const double pass_left = seconds_per_step * (steps - done);
  const double run_left = pass_left + seconds_per_step * steps * passes_after;
  char rest[160];
  std::snprintf(rest, sizeof rest, "/%lld (%.0f%%), %.0f samples/s, pass left %s, run left ~%s",
                static_cast<long long>(position.steps), 100.0 * done / steps, samples_per_sec,
                format_duration(pass_left).c_str(), format_duration(run_left).c_str());
  return line + rest;
}

}  // namespace pstrain::report
