#pragma once
// Resume bookkeeping of one trainer: which of its samples the pass in progress has trained (the part of a
// checkpoint this trainer owns, and what a resumed pass skips), and, per pass, which samples every trainer trained,
// so that the end of the pass can report samples missed or trained twice (both 0 when the data plan and the
// dispatcher are right).
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm/layout.h"
#include "config/train_config.h"
#include "run_common/data_plan.h"
#include "run_common/run_schedule.h"

namespace pstrain::run_common {

// Per pass, over all trainers: samples never trained or trained more than once, and chunks each trainer took
// (dynamic dispatch). Known on the lead trainer only.
struct Coverage {
  std::int64_t missing = 0;
  std::int64_t repeated = 0;
  std::vector<std::int64_t> chunks_per_trainer;
};

class SampleLedger {
 public:
  // `sample_count` is the number of the trainer's samples (its shards in index order, as the job loads them);
  // the configuration gives the order's seed and shuffling, the layout this trainer's place among the trainers.
  SampleLedger(const config::TrainConfig& config, const comm::WorldLayout& layout, const DataPlan& data,
               const RunSchedule& schedule, std::size_t sample_count);

  // The order in which this trainer visits its samples in `pass` (`shared`: dynamic dispatch, one order for all
  // trainers); the first pass of a resumed run leaves out what the checkpoint says is trained.
  std::vector<std::uint32_t> pass_order(int pass, bool shared) const;
  // Starts a pass; `track_coverage` when several trainers share the samples (or dynamic dispatch) so that the
  // end of the pass has something to check.
  void begin_pass(bool track_coverage);
  // Samples order[first, first + n) are trained.
  void record(const std::vector<std::uint32_t>& order, std::size_t first, std::size_t n);
  // Flags over every sample id for a checkpoint: set for this trainer's samples trained in the pass in progress.
  std::vector<std::uint8_t> consumed_by_me() const;
  // The pass is complete: a checkpoint after it starts the next pass from scratch.
  void clear_consumed();
  // Collective over `trainers`: the coverage of `pass` (on the lead trainer) given the chunks this trainer took.
  Coverage gather_coverage(int pass, std::int64_t chunks_taken, MPI_Comm trainers) const;

  const std::vector<std::uint64_t>& sample_ids() const { return sample_ids_; }

 private:
  const config::TrainConfig& config_;
  const comm::WorldLayout& layout_;
  const RunSchedule& schedule_;
  std::vector<std::uint64_t> sample_ids_;  // local sample -> sample id
  std::vector<std::uint8_t> consumed_;     // per sample id: trained in the pass in progress (resume)
  std::vector<std::uint8_t> trained_;      // per sample id: trained in this pass (coverage; empty when untracked)
};

}  // namespace pstrain::run_common
