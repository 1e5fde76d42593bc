#include "trainer/batch_dispatch.h"

#include <algorithm>

namespace pstrain::trainer {

PassBatches::PassBatches(const DataDispatch& dispatch, std::int64_t steps, std::size_t to_train, std::size_t batch_size,
                         std::size_t chunk_size)
    : dispatch_(dispatch),
      steps_(dispatch.take_chunk ? -1 : steps),
      to_train_(to_train),
      batch_size_(batch_size),
      chunk_size_(chunk_size),
      chunks_((to_train + chunk_size - 1) / chunk_size) {}

bool PassBatches::next(std::int64_t step, BatchRange& batch, ChunkRange* chunk) {
  if (chunk != nullptr) *chunk = {};
  if (!dynamic()) {
    if (step >= steps_) return false;
    batch.first = std::min(to_train_, static_cast<std::size_t>(step) * batch_size_);
    batch.count = std::min(batch_size_, to_train_ - batch.first);
    return true;
  }
  if (position_ == chunk_end_) {
    const std::int64_t ticket = dispatch_.take_chunk();
    if (ticket < 0 || static_cast<std::size_t>(ticket) >= chunks_) return false;
    ++chunks_taken_;
    position_ = static_cast<std::size_t>(ticket) * chunk_size_;
    chunk_end_ = std::min(to_train_, position_ + chunk_size_);
    if (chunk != nullptr) *chunk = {position_, chunk_end_ - position_};
  }
  batch.first = position_;
  batch.count = std::min(batch_size_, chunk_end_ - position_);
  position_ += batch.count;
  return true;
}

}  // namespace pstrain::trainer
