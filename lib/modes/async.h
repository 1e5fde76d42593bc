#pragma once
// --mode async, the trainer's side (exchange/step_protocol.h); modes/ssp.cc builds on it.
#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "exchange/gradient_exchange.h"
#include "modes/table_rows_exchange.h"
#include "ps/control_client.h"
#include "ps/data_client.h"
#include "ps/push_stream.h"
#include "ps/table_client.h"

namespace pstrain::modes {

class AsyncExchange : public TableRowsExchange,
                      public exchange::ComputationOverlap,
                      public exchange::RequestedCheckpoints {
 public:
  // `tables`: the row tables the servers hold by rows (null: none). `stream_pushes`: put the gradient block by
  // block during the backward pass (ps/push_stream.h) where the model can report its blocks.
  AsyncExchange(ps::DataClient& client, ps::ControlClient& control, MPI_Comm trainers,
                std::chrono::microseconds poll_interval, ps::TableClient* tables, bool stream_pushes);

  void start(std::span<float> parameters) override;
  exchange::ComputationOverlap* overlap() override { return this; }
  exchange::RequestedCheckpoints* requested_checkpoints() override { return this; }
  nn::ParameterStream* stream_in_place(std::span<const float> gradient, std::span<float> parameters) override;
  void begin_step(std::size_t count) override;
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace& place,
            std::span<float> parameters, int& flags) override;
  void finish_pass(std::span<float> parameters) override;
  int checkpoint_request(int wish) override;
  void set_checkpoint_handler(std::function<bool()> handler) override;
  void quiesce() override;
  void finish() override;

 protected:
  // Polls every shard until it applied our last push, recording the staleness each one reports.
  void wait_until_applied();

  ps::DataClient& client_;
  ps::ControlClient& control_;
  MPI_Comm trainers_;
  std::chrono::microseconds poll_interval_;
  std::function<bool()> on_checkpoint_request_;
  // The last finish_pass gave up: a checkpoint joined in the meeting was a stop, and the trainer that asked for it
  // ended at its step boundary, so nobody meets again.
  bool stopped_in_meeting_ = false;

 private:
  bool stream_pushes_;
  ps::PushStream pushes_;
  std::vector<std::int64_t> pushed_;
  std::vector<std::int64_t> observed_;
};

}  // namespace pstrain::modes
