#pragma once
// The trainer's side of a sync step's messages (ps/block_messages.h): the gradient goes to the shards block by
// block, and each block of the updated parameters comes back straight into the parameter vector. As a
// ParameterStream (nn/parameter_stream.h) it sends each block as soon as the backward pass has finished it and
// waits for a block only when the forward pass of the next step is about to read it; without one, end() sends
// every block and settle() receives them. Who waits for whom: exchange/step_protocol.h.
//
// The main thread does the communication itself, between layers: a communication thread of its own was measured
// slower on this project's 2-core machine (a third busy thread beside the trainer and its server; see
// benchmarks/README.md), and MPI_THREAD_MULTIPLE is refused by the TCP path's one-sided component anyway.
#include <mpi.h>

#include <span>
#include <vector>

#include "exchange/exchange_stats.h"
#include "exchange/range_progress.h"
#include "nn/parameter_stream.h"
#include "ps/shard_plan.h"

namespace pstrain::ps {

class BlockStream final : public nn::ParameterStream {
 public:
  // `plan`: the blocks in the trainer's flat layout; `channel`: the world's duplicate for these messages.
  BlockStream(const ShardPlan& plan, MPI_Comm channel, exchange::ExchangeTimers& timers);
  ~BlockStream() override;  // settles, unless an exception unwinds
  BlockStream(const BlockStream&) = delete;
  BlockStream& operator=(const BlockStream&) = delete;

  // Streaming from now on: blocks leave from `gradient` and arrive in `parameters` (the model's host buffers)
  // during the step.
  void stream_in_place(std::span<const float> gradient, std::span<float> parameters);
  bool streaming() const { return streaming_; }
  // Before the step's computation: sends `count` to every shard.
  void begin(float count);
  void before_forward(std::size_t offset, std::size_t size) override;
  void after_backward(std::size_t offset, std::size_t size) override;
  // After the computation: sends every block not sent yet (none when count was 0: the shards expect nothing),
  // posts the receives still missing, and waits until every send is done.
  void end(std::span<const float> gradient, std::span<float> parameters);
  // Waits for every block still on its way: afterwards `parameters` holds the step's result.
  void settle();

 private:
  void send(std::size_t block, std::span<const float> gradient, std::span<float> parameters);
  void wait_receive(std::size_t block);  // timed as pulling

  std::vector<Block> blocks_;
  MPI_Comm channel_;
  exchange::ExchangeTimers& timers_;
  int shards_;
  std::span<const float> gradient_;  // streaming: the model's buffers
  std::span<float> parameters_;
  bool streaming_ = false;
  float count_ = 0;
  std::vector<MPI_Request> count_sends_;
  exchange::RangeProgress progress_;
  std::vector<bool> sent_;
  std::vector<MPI_Request> sends_;
  std::vector<MPI_Request> receives_;
};

}  // namespace pstrain::ps
