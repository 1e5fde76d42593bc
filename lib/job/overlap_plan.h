#pragma once
// How a parameter-server run overlaps communication with computation (--overlap), decided once for the whole job
// from what its ranks share on their nodes (comm/node_sharing.h); every way computes the same bits.
#include <cstddef>

#include "comm/layout.h"
#include "config/train_config.h"
#include "modes/traits.h"
#include "ps/sync_transport.h"

namespace pstrain::job {

struct OverlapPlan {
  ps::SyncTransport sync = ps::SyncTransport::kOneSided;  // sync steps
  bool stream_pushes = false;                             // async and ssp: gradient blocks put during the backward pass
  std::size_t allreduce_bucket_floats = 0;                // all-reduce: > 0 sums buckets of this size during it
};

// Collective over the world (every rank, servers included); logs the choice and its reason on the lead trainer.
// With push groups (--node-aggregation, job/node_aggregation.h) sync steps and geo meetings are one-sided: a node's
// leader pushes the node's sum after the backward pass (each trainer's blocks cannot stream to the servers).
// --overlap auto:
//   sync streams where every rank has a processor of its own: a streaming shard must be scheduled to answer while
//     its trainers compute. Where ranks share processors (the README's 3 ranks on 2 cores) the one-sided step,
//     whose copies the trainers make themselves, was measured faster (benchmarks/README.md);
//   async and ssp stream their pushes where all ranks are on one node: the puts are copies into the shards'
//     memory there (measured faster); across nodes over emulated one-sided messages (osc/pt2pt) they were slower;
//   all-reduce sums after the backward pass: its trainers have no idle processor to sum on behind the computation
//     (unlike a shard's), and buckets summed during the backward pass (allreduce/bucket_stream.h, --overlap true)
//     were measured slower: 0.955x over shm, 0.814x over TCP at 2 trainers.
OverlapPlan plan_overlap(const config::TrainConfig& config, const comm::WorldLayout& layout);

}  // namespace pstrain::job
