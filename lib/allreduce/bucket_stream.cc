#include "allreduce/bucket_stream.h"

#include <algorithm>
#include <exception>
#include <limits>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"

namespace pstrain::allreduce {

namespace {

std::vector<exchange::FlatRange> buckets_of(std::size_t length, std::size_t bucket_floats) {
  PSTRAIN_ASSERT(bucket_floats > 0 && bucket_floats <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "all-reduce buckets of ", bucket_floats, " floats");
  std::vector<exchange::FlatRange> buckets;
  for (std::size_t offset = 0; offset < length; offset += bucket_floats) {
    buckets.push_back({offset, std::min(bucket_floats, length - offset)});
  }
  return buckets;
}

}  // namespace

BucketStream::BucketStream(MPI_Comm trainers, compute::Backend& backend, std::span<float> gradient,
                           std::size_t bucket_floats)
    : trainers_(trainers),
      backend_(backend),
      gradient_(gradient),
      progress_(buckets_of(gradient.size(), bucket_floats)),
      whole_(progress_.size(), false),
      sums_(progress_.size(), MPI_REQUEST_NULL) {}

BucketStream::~BucketStream() {
  // MPI must not write into the gradient once it is gone; after a failure the job ends anyway.
  if (std::uncaught_exceptions() == 0) {
    MPI_Wait(&agreement_, MPI_STATUS_IGNORE);
    MPI_Waitall(static_cast<int>(sums_.size()), sums_.data(), MPI_STATUSES_IGNORE);
  }
}

void BucketStream::begin(std::size_t count) {
  count_ = static_cast<std::int64_t>(count);
  progress_.reset();
  std::fill(whole_.begin(), whole_.end(), false);
  unstarted_ = progress_.size();
  MPI_CHECK(MPI_Iallreduce(&count_, &total_, 1, MPI_INT64_T, MPI_SUM, trainers_, &agreement_));
}

void BucketStream::after_backward(std::size_t offset, std::size_t size) {
  progress_.report(offset, size, [this](std::size_t bucket) { whole_[bucket] = true; });
  start_ready();
  int done = 0;  // drives the started sums along
  MPI_CHECK(MPI_Testall(static_cast<int>(sums_.size()), sums_.data(), &done, MPI_STATUSES_IGNORE));
}

std::int64_t BucketStream::end() {
  const comm::Watchdog::Wait wait("an all-reduce step (the gradient's buckets)");
  std::fill(whole_.begin(), whole_.begin() + static_cast<std::ptrdiff_t>(unstarted_), true);
  start_ready();
  MPI_CHECK(MPI_Waitall(static_cast<int>(sums_.size()), sums_.data(), MPI_STATUSES_IGNORE));
  return total_;
}

// This trainer's share of the step, count / total (total > 0), as modes/allreduce.cc computes it.
float BucketStream::weight() const {
  return static_cast<float>(static_cast<double>(count_) / static_cast<double>(total_));
}

void BucketStream::start_ready() {
  while (unstarted_ > 0 && whole_[unstarted_ - 1]) start(--unstarted_);
}

// The same multiply (or zeroing) and sum as the whole-vector step (modes/allreduce.cc), on one bucket.
void BucketStream::start(std::size_t bucket) {
  MPI_CHECK(MPI_Wait(&agreement_, MPI_STATUS_IGNORE));  // at once after the first: a no-op
  if (total_ == 0) return;                              // no trainer had samples: every trainer skips every bucket
  const exchange::FlatRange& range = progress_.range(bucket);
  float* const data = gradient_.data() + range.offset;
  if (count_ == 0) {  // the buffer holds an older step's gradient: it must count for nothing
    backend_.fill(data, range.length, 0.0f);
  } else {
    backend_.scale(data, range.length, weight());
  }
  MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(range.length), MPI_FLOAT, MPI_SUM, trainers_,
                           &sums_[bucket]));
}

}  // namespace pstrain::allreduce
