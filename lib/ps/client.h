#pragma once
// Trainer side of the parameter service: one-sided push and pull of the whole flat vector against every shard (the
// async modes' steps, and every mode's first pull; a sync step's blocks go as messages, ps/block_stream.h).
// One indexed datatype per shard gathers that shard's blocks straight out of the flat vector, so each shard costs
// one MPI_Put (push) or one MPI_Get (pull) and no packing copy.
#include <cstdint>
#include <span>
#include <vector>

#include "comm/datatype.h"
#include "comm/layout.h"
#include "ps/shard_plan.h"
#include "ps/windows.h"

namespace pstrain::ps {

class PsClient {
 public:
  PsClient(PsWindows& windows, const ShardPlan& plan, const comm::WorldLayout& layout);

  // Puts `gradient` (full flat vector), `count` and the version of each shard's parameters as of the last pull into
  // this trainer's slot on every shard (its push group's, comm/push_groups.h: with node aggregation only the
  // group's leader pushes); returns when the data is complete at every target.
  void push(std::span<const float> gradient, float count);
  // The same push block by block, as the backward pass finishes them (ps/push_stream.h): begin_push opens the
  // epoch, push_block puts one block of `gradient` (which must not change before end_push), end_push puts `count`
  // and returns when every put is complete at its target.
  void begin_push();
  void push_block(const Block& block, std::span<const float> gradient);
  void end_push(float count);
  const ShardPlan& plan() const { return plan_; }
  // Gets every shard's slice into `parameters` (full flat vector) and records each shard's version.
  void pull(std::span<float> parameters);
  // Version of shard s's parameters as of the last pull.
  std::int64_t version(int shard) const { return versions_.at(shard); }

  // Async bookkeeping on shard s's control words: our pushes it applied, and the staleness of the last one (the
  // server writes it before applied_seq: read it after seeing applied_seq move); announce push `sequence` (its
  // slot, base version included, complete at the shard: after push or end_push).
  std::int64_t applied_seq(int shard);
  std::int64_t staleness(int shard);
  void announce_push(int shard, std::int64_t sequence);
  void announce_done();
  // Dynamic data dispatch: the next chunk ticket of the pass (an atomic counter in shard 0's control word 0,
  // MPI_Fetch_and_op), and its reset between passes (by one trainer, while all trainers wait).
  std::int64_t take_chunk();
  void reset_chunks();
  // Async checkpoints (shard 0's control words): add request bits, read them, count this trainer quiesced.
  void request_checkpoint(std::int64_t bits);
  std::int64_t checkpoint_request();
  void announce_quiesced();
  // Sync with node aggregation and row tables: this trainer's samples in the step, on every shard (they weight its
  // row slots there; its group's slot carries the group's count). Complete at every shard on return.
  void announce_samples(std::int64_t samples);
  // SSP clocks, kept on shard 0: publish this trainer's, read everyone's.
  void publish_clock(std::int64_t clock);
  std::vector<std::int64_t> read_clocks();

  int shards() const { return plan_.shards(); }

 private:
  // One atomic read-modify-write of a control word (MPI_Fetch_and_op); returns the previous value.
  std::int64_t atomic_on_shard(int shard, std::size_t index, std::int64_t operand, MPI_Op op);

  PsWindows& windows_;
  const ShardPlan& plan_;
  comm::WorldLayout layout_;
  std::vector<comm::Datatype> shard_types_;
  std::vector<std::int64_t> versions_;
  std::vector<float> trailers_;  // end_push: each shard's slot trailer, alive until the epoch ends
};

}  // namespace pstrain::ps
