#pragma once
// Trainer side of the parameter service, its data plane: one-sided push and pull of the whole flat vector against
// every shard (the async modes' steps, and every mode's first pull; a sync step's blocks go as messages,
// ps/block_stream.h). The control words (who pushed what, checkpoint requests, clocks, the dispatcher) are the
// control plane's: ps/control_client.h.
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

class DataClient {
 public:
  DataClient(PsWindows& windows, const ShardPlan& plan, const comm::WorldLayout& layout);

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

  int shards() const { return plan_.shards(); }

 private:
  PsWindows& windows_;
  const ShardPlan& plan_;
  comm::WorldLayout layout_;
  std::vector<comm::Datatype> shard_types_;
  std::vector<std::int64_t> versions_;
  std::vector<float> trailers_;  // end_push: each shard's slot trailer, alive until the epoch ends
};

}  // namespace pstrain::ps
