#include "launch/job_output.h"

#include <algorithm>
#include <regex>

namespace pstrain::launch {

namespace {

const std::regex& resume_line() {
  static const std::regex pattern(R"(resuming from (\S+): pass (\d+), step (\d+) of it, global step (\d+))");
  return pattern;
}
// lib/report/progress_line.cc's line, passes numbered from 0: "pass 1 of 0..2 step 21/60 (35%), ..." is the second
// pass of three (tests/unit/launch feeds it that program's own line, so that a change of format fails there).
const std::regex& progress_line() {
  static const std::regex pattern(R"(\] pass (\d+) of 0\.\.\d+ step (\d+))");
  return pattern;
}
// The lead trainer's start line (lib/job/job_start.cc, log_start).
const std::regex& start_line() {
  static const std::regex pattern(
      R"(pstrain \S+: (\d+) ranks = (\d+) parameter-server shard\(s\) \+ (\d+) trainer\(s\))");
  return pattern;
}
const std::regex& failed_rank_line() {
  static const std::regex pattern(R"(process rank (\d+) with PID \d+ on node (\S+) (exited on signal \d+|exited))");
  return pattern;
}

}  // namespace

bool JobOutput::read_line(const std::string& line) {
  std::smatch match;
  if (line.find("first step done") != std::string::npos) {
    const bool first = !first_step_done_;
    first_step_done_ = true;
    return first;
  }
  if (std::regex_search(line, match, progress_line())) {
    // Steps of a progress line count from this job's start of the pass: the resumed pass started at the
    // checkpoint's step.
    TrainingPosition at{std::stoi(match[1]), std::stoll(match[2])};
    if (resumed_ && at.pass == resumed_->position.pass) at.step_in_pass += resumed_->position.step_in_pass;
    if (at.pass > reached_.pass || (at.pass == reached_.pass && at.step_in_pass > reached_.step_in_pass)) {
      reached_ = at;
    }
  } else if (std::regex_search(line, match, start_line())) {
    layout_ = Layout{std::stoi(match[2]), std::stoi(match[3])};
  } else if (std::regex_search(line, match, resume_line())) {
    resumed_ = ResumePoint{match[1], {std::stoi(match[2]), std::stoll(match[3])}, std::stoll(match[4])};
    reached_ = resumed_->position;
  } else if (line.find("training finished:") != std::string::npos) {
    finished_ = true;
  } else if (line.find("stopped on a signal") != std::string::npos) {
    stopped_ = true;
  } else if (std::regex_search(line, match, failed_rank_line())) {
    const int rank = std::stoi(match[1]);
    if (std::find(failed_ranks_.begin(), failed_ranks_.end(), rank) == failed_ranks_.end()) {
      failed_ranks_.push_back(rank);
    }
    if (failure_detail_.empty()) failure_detail_ = match[0];
  }
  return false;
}

bool is_progress_line(const std::string& line) {
  return std::regex_search(line, progress_line());
}

std::optional<std::int64_t> steps_lost(const TrainingPosition& reached, const TrainingPosition& resumed) {
  if (resumed.pass > reached.pass) return 0;
  if (resumed.pass < reached.pass) return std::nullopt;
  return std::max<std::int64_t>(0, reached.step_in_pass - resumed.step_in_pass);
}

}  // namespace pstrain::launch
