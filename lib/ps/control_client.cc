#include "ps/control_client.h"

#include "ps/control_words.h"

namespace pstrain::ps {

ControlClient::ControlClient(PsWindows& windows, const comm::WorldLayout& layout)
    : windows_(windows), layout_(layout) {}

std::int64_t ControlClient::applied_seq(int shard) {
  return windows_.control.read(shard, control_index(layout_.trainer_index, kAppliedSeq));
}

std::int64_t ControlClient::staleness(int shard) {
  return windows_.control.read(shard, control_index(layout_.trainer_index, kStaleness));
}

void ControlClient::announce_push(int shard, std::int64_t sequence) {
  windows_.control.write(shard, control_index(layout_.trainer_index, kPushedSeq), sequence);
}

std::int64_t ControlClient::atomic_on_shard(int shard, std::size_t index, std::int64_t operand, MPI_Op op) {
  return windows_.control.fetch_and_op(shard, index, operand, op);
}

std::int64_t ControlClient::take_chunk() {
  return atomic_on_shard(0, kChunkCounterIndex, 1, MPI_SUM);
}
void ControlClient::reset_chunks() {
  atomic_on_shard(0, kChunkCounterIndex, 0, MPI_REPLACE);
}
void ControlClient::request_checkpoint(std::int64_t bits) {
  atomic_on_shard(0, kCheckpointRequestIndex, bits, MPI_BOR);
}
std::int64_t ControlClient::checkpoint_request() {
  return atomic_on_shard(0, kCheckpointRequestIndex, 0, MPI_NO_OP);
}
void ControlClient::announce_quiesced() {
  atomic_on_shard(0, kQuiescedIndex, 1, MPI_SUM);
}

void ControlClient::announce_samples(std::int64_t samples) {
  for (int shard = 0; shard < layout_.pservers; ++shard) {
    windows_.control.write(shard, control_index(layout_.trainer_index, kSamples), samples);
  }
}

void ControlClient::publish_clock(std::int64_t clock) {
  windows_.control.write(0, control_index(layout_.trainer_index, kClock), clock);
}

std::vector<std::int64_t> ControlClient::read_clocks() {
  std::vector<std::int64_t> control(control_size(layout_.trainers));
  windows_.control.read(0, 0, control);
  std::vector<std::int64_t> clocks;
  for (int trainer = 0; trainer < layout_.trainers; ++trainer)
    clocks.push_back(control[control_index(trainer, kClock)]);
  return clocks;
}

void ControlClient::announce_done() {
  for (int shard = 0; shard < layout_.pservers; ++shard) atomic_on_shard(shard, kDoneIndex, 1, MPI_SUM);
}

}  // namespace pstrain::ps
