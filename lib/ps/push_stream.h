#pragma once
// The trainer's side of an async (or SSP) push, block by block: as a ParameterStream (nn/parameter_stream.h) it
// puts each block of the gradient into this trainer's slot on the block's shard as soon as the backward pass has
// finished it, one-sided as the whole push (DataClient::push), inside one epoch that begin() opens and end()
// completes; end() then puts the blocks not put yet and the sample count. The push is announced after end(), as
// ever (exchange/step_protocol.h), so a shard never reads a slot that is still being written.
//
// The parameters are not streamed in: an async pull reads each slice whole with its version under a shared lock,
// and holding that lock through a forward pass would keep the shards from applying the other trainers' pushes.
#include <span>

#include "exchange/range_progress.h"
#include "nn/parameter_stream.h"
#include "ps/data_client.h"

namespace pstrain::ps {

class PushStream final : public nn::ParameterStream {
 public:
  explicit PushStream(DataClient& client) : client_(client), progress_(client.plan().block_ranges()) {}

  // Streaming from now on: blocks leave from `gradient` (the model's host buffer).
  void stream_in_place(std::span<const float> gradient) { gradient_ = gradient; }
  bool streaming() const { return !gradient_.empty(); }
  // Before the step's computation: this trainer's slots are free (its last push is applied).
  void begin();
  void before_forward(std::size_t, std::size_t) override {}
  void after_backward(std::size_t offset, std::size_t size) override;
  // After the computation: the rest of the push; returns when all of it is at the shards.
  void end(float count);

 private:
  DataClient& client_;
  exchange::RangeProgress progress_;
  std::span<const float> gradient_;
  std::vector<bool> put_;
  bool open_ = false;
};

}  // namespace pstrain::ps
