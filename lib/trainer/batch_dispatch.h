#pragma once
// Where a trainer's next batch comes from in a pass. Static: `steps` batches of the trainer's own order (sync:
// every trainer takes the same count, some batches maybe empty). Dynamic (--dynamic-dispatch): chunks of one
// order shared by all trainers, taken from a dispatcher until it runs dry, so a slow trainer simply takes fewer.
#include <cstddef>
#include <cstdint>
#include <functional>

namespace pstrain::trainer {

// Dynamic data dispatch: where the next chunk ticket comes from (null: static shards) and how to rewind it.
struct DataDispatch {
  std::function<std::int64_t()> take_chunk;
  std::function<void()> reset;
};

// Samples order[first, first + count) of the pass.
struct BatchRange {
  std::size_t first = 0;
  std::size_t count = 0;
};

// Dynamic: samples order[first, first + count) are the chunk the trainer was just given (its batches follow).
struct ChunkRange {
  std::size_t first = 0;
  std::size_t count = 0;
};

class PassBatches {
 public:
  // `to_train` samples are left in the pass's order; `steps` is the static step count (ignored when dynamic).
  PassBatches(const DataDispatch& dispatch, std::int64_t steps, std::size_t to_train, std::size_t batch_size,
              std::size_t chunk_size);

  // The batch of step `step` (steps count from 0 in this pass), or false when the pass is over for this trainer.
  // Dynamic: `chunk` is set to the chunk taken for this batch, and left empty when the batch is of the last one.
  bool next(std::int64_t step, BatchRange& batch, ChunkRange* chunk = nullptr);
  bool dynamic() const { return dispatch_.take_chunk != nullptr; }
  // Static: the step count; dynamic: -1 (unknown in advance).
  std::int64_t steps() const { return steps_; }
  std::int64_t chunks_taken() const { return chunks_taken_; }

 private:
  const DataDispatch& dispatch_;
  std::int64_t steps_;
  std::size_t to_train_;
  std::size_t batch_size_;
  std::size_t chunk_size_;
  std::size_t chunks_;
  std::size_t chunk_end_ = 0;
  std::size_t position_ = 0;
  std::int64_t chunks_taken_ = 0;
};

}  // namespace pstrain::trainer
