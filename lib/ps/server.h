#pragma once
// Server side of the parameter service: shard s owns its slice of the flat vector in its params window and runs
// the optimizer on it. The memory is in windows.h, the protocol in exchange/step_protocol.h.
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/layout.h"
#include "optim/optimizer.h"
#include "ps/shard_plan.h"
#include "ps/sync_transport.h"
#include "ps/table_plan.h"
#include "ps/table_shard.h"
#include "ps/windows.h"

namespace pstrain::ps {

// A shard's share of the model state, for checkpoints: its dense blocks of the parameters and of every optimizer
// state vector, in the shard's local order, and its rows of every row table (written to row files of their own).
// Views, not copies (a model of multi-GB tables would otherwise hold a second copy at every checkpoint): valid until
// the holder's next update; a server's parameters are copied out of its window into `parameter_copy`.
struct SliceState {
  std::span<const float> parameters;
  std::vector<std::pair<std::string, std::span<const float>>> optimizer;
  std::uint64_t optimizer_steps = 0;
  std::vector<TableShard*> tables;  // in TablePlan order, read in place (TableShard::visit_rows)
  std::vector<float> parameter_copy;
};

struct ServerStats {
  std::int64_t updates = 0;
  double busy_seconds = 0;  // time spent summing and updating, not waiting
};

class ShardServer {
 public:
  // `initial` is this shard's slice (its dense blocks, local order). `transport`: how sync steps travel, the same
  // on every rank; `channel`: the world's duplicate that carries streamed steps' messages (block_messages.h). Call
  // before the job's start barrier.
  ShardServer(PsWindows& windows, const ShardPlan& plan, const comm::WorldLayout& layout, SyncTransport transport,
              MPI_Comm channel, std::unique_ptr<optim::Optimizer> optimizer, std::span<const float> initial);
  // The row tables this shard serves beside its dense blocks.
  void serve_tables(std::vector<std::unique_ptr<TableShard>> tables) { tables_ = std::move(tables); }

  // Sync: one step (exchange/step_protocol.h): the trainers' gradients summed in trainer order (the same bits
  // every run) and the optimizer run on the sum, for the whole slice at once (one-sided) or block by block as each
  // arrives (streamed); then the agreement on `flags`, which it returns. `global_step`: the step this meeting ends
  // (counted over the run, resumes included): when keyed tables meet (TableShard::meet).
  int sync_step(int flags, std::int64_t global_step);
  // Async: applies each trainer's push as its own update until every trainer announced it is done (kDone), or
  // until a checkpoint was requested and every trainer quiesced for it (kCheckpoint; call again afterwards).
  // Between polls that found nothing it pauses `poll_interval` (core/poll_pause.h: 0 yields the processor, so a
  // rank sharing it runs meanwhile while no push waits longer than the server takes to be scheduled again).
  enum class AsyncOutcome { kDone, kCheckpoint };
  AsyncOutcome serve_async(std::chrono::microseconds poll_interval);
  // The request bits that made serve_async return kCheckpoint.
  std::int64_t checkpoint_request() const { return checkpoint_request_; }
  // Rank 0, after the checkpoint: clears the request and the quiesced count (before the world barrier).
  void clear_checkpoint_request();

  SliceState export_state();
  // Takes this shard's dense blocks of a model state in the dense layout (ModelPartition::gather_dense), as a
  // checkpoint's model.h5 holds it; the rows of the tables come through tables().
  void import_state(const ModelPartition& partition, std::span<const float> parameters,
                    const std::vector<std::pair<std::string, std::vector<float>>>& optimizer, std::uint64_t steps);
  const std::vector<std::unique_ptr<TableShard>>& tables() const { return tables_; }

  const ServerStats& stats() const { return stats_; }
  std::int64_t version() const { return version_; }

 private:
  void apply(std::span<const float> gradient);
  std::int64_t apply_push(int trainer);  // async: returns the push's staleness
  int one_sided_step(int flags);
  int streamed_step(int flags);
  // Sync: each trainer's weight in the step, its count over the total (weights_); returns how many are not 0.
  int set_weights(std::span<const float> counts);
  void update_tables();
  int receive_counts();  // streamed: the counts come as messages
  // Sync with node aggregation and row tables: weights_ per trainer, from the samples each announced.
  void set_trainer_weights();
  // Sync: summed_[offset, offset + length) = the weighted sum of the trainers' slots there.
  void sum_range(std::size_t offset, std::size_t length);
  // Streamed: receives, sums, updates and sends back every block of this shard.
  void stream_updates(int contributing);
  void update_block(std::size_t mine);

  PsWindows& windows_;
  comm::WorldLayout layout_;
  std::size_t slice_size_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  SyncTransport transport_;
  MPI_Comm channel_;
  std::vector<std::pair<std::size_t, Segment>> blocks_;  // sync: this shard's blocks (plan index, place)
  std::vector<MPI_Request> receives_;                    // sync: block-major, one per trainer
  std::vector<MPI_Request> sends_;                       // sync: the same layout
  std::vector<int> arrived_;                             // sync: trainers' parts in, per block
  std::vector<float> summed_;                            // sync: the averaged gradient of one step
  // Each slot's weight in a sync step; each trainer's in a table update (TableShard::update).
  std::vector<float> weights_;
  std::vector<std::unique_ptr<TableShard>> tables_;
  std::int64_t version_ = 0;
  std::int64_t global_step_ = 0;       // sync: of the step in progress
  std::vector<std::int64_t> applied_;  // async: last push applied, per trainer
  std::int64_t checkpoint_request_ = 0;
  ServerStats stats_;
};

}  // namespace pstrain::ps
