#pragma once
// The two ways a sync step moves gradients and parameters between trainers and shards; both compute the same bits
// (the sum in trainer order, the optimizer's elementwise update), only when the data travels differs. Who waits
// for whom in each: exchange/step_protocol.h.
namespace pstrain::ps {

enum class SyncTransport {
  // After the backward pass every trainer puts its whole gradient into its slots and, after the update, gets the
  // parameters: one-sided, so on one node (osc/rdma or osc/sm, over shared memory) the trainers do the copies and
  // the shard only sums and updates.
  kOneSided,
  // Messages per block (ps/block_messages.h): each block of the gradient leaves as soon as the backward pass has
  // it, the shard updates a block once every trainer's part is in and sends it back, and the next forward pass
  // waits for a block only when it reads it. Pays where the shard has a processor to answer on while its
  // trainers compute; where ranks share processors, the one-sided step was measured faster (benchmarks/README.md).
  kStreamed,
};

}  // namespace pstrain::ps
