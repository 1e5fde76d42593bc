#include "ps/push_stream.h"

#include <algorithm>

namespace pstrain::ps {

void PushStream::begin() {
  progress_.reset();
  put_.assign(client_.plan().blocks().size(), false);
  client_.begin_push();
  open_ = true;
}

void PushStream::after_backward(std::size_t offset, std::size_t size) {
  if (!open_) return;
  progress_.report(offset, size, [this](std::size_t block) {
    client_.push_block(client_.plan().blocks()[block], gradient_);
    put_[block] = true;
  });
}

void PushStream::end(float count) {
  const auto& blocks = client_.plan().blocks();
  for (std::size_t block = 0; block < blocks.size(); ++block) {
    if (!put_[block]) client_.push_block(blocks[block], gradient_);
  }
  client_.end_push(count);
  open_ = false;
}

}  // namespace pstrain::ps
