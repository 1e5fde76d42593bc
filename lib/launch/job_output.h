#pragma once
// Reads a job's console output (mpirun's stdout and stderr: pstrain's lead-trainer lines and mpirun's own
// messages) line by line, and keeps what the driver needs to know about the job:
//   "[...] pstrain V: N ranks = P parameter-server shard(s) + T trainer(s), ..."   the split it runs (the count
//                                                                       pstrain chose where the driver gave -1)
//   "[...] resuming from PATH: pass P, step S of it, global step G"   the checkpoint it resumed from
//   "[...] first step done ..."                                        training runs (the event's cost ends here)
//   "[...] pass P of 0..N-1 step S..."                                 the progress line: how far it got
//   "[...] training finished: ..." / "[...] stopped on a signal ..."   how an exit 0 ended
//   "... process rank R with PID X on node H exited on signal 9 ..."   which rank failed (mpirun)
// The lines are pstrain's (lib/job/job.cc, lib/trainer/trainer_loop.cc, lib/report/progress_line.cc) and Open
// MPI 4.1's.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "launch/world_plan.h"

namespace pstrain::launch {

// A position in training: pass (0-based) and steps of that pass already done.
struct TrainingPosition {
  int pass = 0;
  std::int64_t step_in_pass = 0;
};

struct ResumePoint {
  std::string checkpoint;
  TrainingPosition position;
  std::int64_t global_step = 0;
};

class JobOutput {
 public:
  // Feeds one line (without its newline). Returns true when the line says the first step is done.
  bool read_line(const std::string& line);

  bool first_step_done() const { return first_step_done_; }
  bool finished() const { return finished_; }
  bool stopped_on_signal() const { return stopped_; }
  const std::optional<ResumePoint>& resumed() const { return resumed_; }
  // The split the job's start line names (pstrain's own count under --num-pservers -1).
  const std::optional<Layout>& layout() const { return layout_; }
  // The furthest position a progress line showed (the start, or the checkpoint resumed from, before any).
  TrainingPosition reached() const { return reached_; }
  const std::vector<int>& failed_ranks() const { return failed_ranks_; }
  const std::string& failure_detail() const { return failure_detail_; }

 private:
  bool first_step_done_ = false;
  bool finished_ = false;
  bool stopped_ = false;
  std::optional<ResumePoint> resumed_;
  std::optional<Layout> layout_;
  TrainingPosition reached_;
  std::vector<int> failed_ranks_;
  std::string failure_detail_;
};

// Is this pstrain's progress line ("[...] pass P of 0..N-1 step S...")?
bool is_progress_line(const std::string& line);

// Steps of training lost between what the previous job reached and where the next one resumed: 0 when the
// checkpoint is at or past it, none when the checkpoint is in an earlier pass than the progress seen (unknown).
// Exact for a planned stop (the job checkpoints at the step it stops); after a crash a lower bound, off by at most
// the steps of one progress interval (--progress-every-s, 1 s in elastic mode).
std::optional<std::int64_t> steps_lost(const TrainingPosition& reached, const TrainingPosition& resumed);

}  // namespace pstrain::launch
