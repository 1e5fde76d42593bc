#pragma once
// The dry-run's ranks (benchmarks/scale/README.md): servers and trainers built from lib/ps, lib/allreduce and
// lib/exchange exactly as a pstrain job builds them (windows, shard plan, ShardServer, the data and control clients,
// the mode's GradientExchange from the modes' registry, modes/builders.h, the start and end meetings of
// exchange/step_protocol.h), stepping a fixed number of steps.
// What differs from lib/train's loop: no data (every step has `batch` samples), no evaluation, no checkpoints,
// one pass, and the trainer's computation is the profile's simulated time (simulated_compute.h). A profile's row
// table (the NPLM's embedding) is held by the servers by rows as pstrain holds it (ps/table_shard.h,
// ps/table_client.h); each step fetches and pushes the rows of one of the profile's id batches, in turn.
#include <chrono>
#include <string>

#include "comm/layout.h"
#include "modes/traits.h"
#include "simulation/job_profile.h"

namespace pstrain::simulation {

struct DryRunJob {
  JobProfile profile;
  modes::Mode mode = modes::Mode::kSync;
  std::int64_t steps_alone = 4;  // geo: steps a trainer takes alone between meetings
  std::string optimizer = "sgd";
  std::int64_t steps = 50;  // per trainer, timed
  // Steps every trainer takes before the timed ones. The first steps pay start-up once: under SMPI the first
  // MPI_Allreduce over the world took 2.7 ms at 256 ranks and the ones after it 0.07 ms, which over 5 timed steps
  // read as a meeting growing with the ranks (benchmarks/scale/README.md, "Round 6").
  std::int64_t warmup_steps = 1;
  std::size_t block_size = 8192;
  int staleness = 3;
  std::chrono::microseconds poll_interval{0};
  // Async and ssp: the gradient put block by block as the backward pass finishes it (pstrain's --overlap true,
  // ps/push_stream.h). Refused for sync and all-reduce (dryrun_ranks.cc says why).
  bool overlap = false;
  // Sync: the trainers of a simulated host sum their gradients and one of them pushes (pstrain's
  // --node-aggregation on, comm/push_groups.h): the servers hold one slot per host.
  bool node_aggregation = false;
};

// What one rank measured, in simulated seconds and bytes; gathered to rank 0 as plain doubles.
struct RankReport {
  double is_server = 0;
  double compute_seconds = 0, push_seconds = 0, sync_seconds = 0, pull_seconds = 0, gate_seconds = 0;
  double allreduce_seconds = 0, update_seconds = 0;
  double train_seconds = 0;  // trainer: first timed step to last (finish_pass included); server: serving
  double samples = 0;
  double bytes_in = 0, bytes_out = 0;  // server: the dense traffic its slices take and give in the timed steps
  double memory_bytes = 0;             // pstrain's own buffers on this rank, plus the profile's baseline
  double updates = 0, busy_seconds = 0;
  double mean_staleness = 0;
  double table_bytes = 0;  // trainer: row-table traffic (rows and their ids, both ways, ps::TableTraffic)
  double push_slots = 0;   // server: gradient slots it holds (push groups, comm/push_groups.h)
  static constexpr int kFields = 18;
};

// Collective over MPI_COMM_WORLD.
RankReport run_dry_rank(const DryRunJob& job, const comm::WorldLayout& layout);

}  // namespace pstrain::simulation
