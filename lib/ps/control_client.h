#pragma once
// Trainer side of the parameter service, its control plane: the words each shard keeps beside its parameters
// (ps/windows.h, ps/control_words.h), read and written by atomic operations: which push of ours a shard applied
// and how stale it was, the dispatcher's chunk counter, async checkpoint requests, the ssp clocks, the samples a
// trainer brings to a sync step with node aggregation, and "done". The gradients and parameters themselves go
// through the data plane (ps/data_client.h). Who waits for whom on these words: exchange/step_protocol.h.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm/layout.h"
#include "ps/windows.h"

namespace pstrain::ps {

class ControlClient {
 public:
  ControlClient(PsWindows& windows, const comm::WorldLayout& layout);

  // Async bookkeeping on shard s's control words: our pushes it applied, and the staleness of the last one (the
  // server writes it before applied_seq: read it after seeing applied_seq move); announce push `sequence` (its
  // slot, base version included, complete at the shard: after DataClient::push or end_push).
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

 private:
  // One atomic read-modify-write of a control word (MPI_Fetch_and_op); returns the previous value.
  std::int64_t atomic_on_shard(int shard, std::size_t index, std::int64_t operand, MPI_Op op);

  PsWindows& windows_;
  comm::WorldLayout layout_;
};

}  // namespace pstrain::ps
