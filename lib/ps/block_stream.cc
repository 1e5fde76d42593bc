#include "ps/block_stream.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/timing.h"
#include "ps/block_messages.h"

namespace pstrain::ps {

BlockStream::BlockStream(const ShardPlan& plan, MPI_Comm channel, exchange::ExchangeTimers& timers)
    : blocks_(plan.blocks()),
      channel_(channel),
      timers_(timers),
      shards_(plan.shards()),
      count_sends_(static_cast<std::size_t>(plan.shards()), MPI_REQUEST_NULL),
      progress_(plan.block_ranges()),
      sent_(blocks_.size(), false),
      sends_(blocks_.size(), MPI_REQUEST_NULL),
      receives_(blocks_.size(), MPI_REQUEST_NULL) {
  check_block_tags(channel, blocks_.size());
}

BlockStream::~BlockStream() {
  // Nothing may still write into the parameters once they are gone; after a failure the job ends anyway.
  if (std::uncaught_exceptions() == 0) {
    MPI_Waitall(static_cast<int>(receives_.size()), receives_.data(), MPI_STATUSES_IGNORE);
    MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
  }
}

void BlockStream::stream_in_place(std::span<const float> gradient, std::span<float> parameters) {
  gradient_ = gradient;
  parameters_ = parameters;
  streaming_ = true;
}

void BlockStream::begin(float count) {
  count_ = count;
  progress_.reset();
  std::fill(sent_.begin(), sent_.end(), false);
  for (int shard = 0; shard < shards_; ++shard) {
    MPI_CHECK(MPI_Isend(&count_, 1, MPI_FLOAT, shard, kCountTag, channel_, &count_sends_[shard]));
  }
}

void BlockStream::before_forward(std::size_t offset, std::size_t size) {
  if (!streaming_) return;
  const auto [first, last] = progress_.ranges_in(offset, size);
  for (std::size_t block = first; block < last; ++block) wait_receive(block);
}

void BlockStream::after_backward(std::size_t offset, std::size_t size) {
  if (!streaming_ || count_ == 0) return;
  progress_.report(offset, size, [this](std::size_t block) { send(block, gradient_, parameters_); });
}

void BlockStream::send(std::size_t block, std::span<const float> gradient, std::span<float> parameters) {
  const Block& where = blocks_[block];
  const auto length = static_cast<int>(where.place.length);
  if (count_ > 0) {
    MPI_CHECK(MPI_Isend(gradient.data() + where.place.global_offset, length, MPI_FLOAT, where.shard, block_tag(block),
                        channel_, &sends_[block]));
  }
  // The block's values are not read again this step: the update may land in them right away, once the last
  // step's update of the block is in (a step without samples read nothing that would have waited for it).
  wait_receive(block);
  MPI_CHECK(MPI_Irecv(parameters.data() + where.place.global_offset, length, MPI_FLOAT, where.shard, block_tag(block),
                      channel_, &receives_[block]));
  sent_[block] = true;
}

void BlockStream::end(std::span<const float> gradient, std::span<float> parameters) {
  for (std::size_t block = 0; block < blocks_.size(); ++block) {
    if (!sent_[block]) send(block, gradient, parameters);
  }
  const auto start = Clock::now();
  const comm::Watchdog::Wait waiting("sending the gradient to the servers");
  MPI_CHECK(MPI_Waitall(static_cast<int>(count_sends_.size()), count_sends_.data(), MPI_STATUSES_IGNORE));
  MPI_CHECK(MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE));
  timers_.push_seconds += seconds_since(start);
}

void BlockStream::settle() {
  for (std::size_t block = 0; block < blocks_.size(); ++block) wait_receive(block);
}

void BlockStream::wait_receive(std::size_t block) {
  if (receives_[block] == MPI_REQUEST_NULL) return;
  const auto start = Clock::now();
  {
    const comm::Watchdog::Wait waiting("receiving the updated parameters from the servers");
    MPI_CHECK(MPI_Wait(&receives_[block], MPI_STATUS_IGNORE));
  }
  timers_.pull_seconds += seconds_since(start);
}

}  // namespace pstrain::ps
