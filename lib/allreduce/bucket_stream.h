#pragma once
// The all-reduce of a step's gradient in buckets, behind the backward pass. As a ParameterStream
// (nn/parameter_stream.h) it scales each bucket of the model's gradient by this trainer's share of the step's
// samples and starts the bucket's MPI_Iallreduce as soon as the backward pass has finished it, while the pass goes
// on below; end() starts what is left and waits for all of it. The model's gradient must be in host memory.
//
// Who waits for whom: nonblocking collectives must start in the same order on every trainer, so the agreement on
// the step's samples starts first (begin), and the buckets start in descending order everywhere: a bucket the
// backward pass has finished waits until every later one has started (the backward pass finishes them roughly in
// that order anyway). A trainer without samples has nothing to report and starts them all, zeroed, in end().
// MPI calls during the backward pass (MPI_Testall after each report) move the started ones along.
//
// Bits: at 2 trainers each element is the sum of two terms, the same in any order, so a streamed step gives the
// bits of one MPI_Allreduce over the whole vector. At 3 or more, Open MPI's nonblocking all-reduce (libnbc) adds
// in another order than its blocking one: still the same order on every run, but not --overlap false's bits.
// Only --overlap true streams (job/overlap_plan.h says why).
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compute/backend.h"
#include "exchange/range_progress.h"
#include "nn/parameter_stream.h"

namespace pstrain::allreduce {

class BucketStream final : public nn::ParameterStream {
 public:
  // `gradient`: the model's flat gradient, in memory the backend's scale and fill work on and MPI can read.
  BucketStream(MPI_Comm trainers, compute::Backend& backend, std::span<float> gradient, std::size_t bucket_floats);
  ~BucketStream() override;  // waits for what is still on its way, unless an exception unwinds
  BucketStream(const BucketStream&) = delete;
  BucketStream& operator=(const BucketStream&) = delete;

  // Before the step's computation: starts the agreement on the step's samples (`count`: this trainer's).
  void begin(std::size_t count);
  void before_forward(std::size_t, std::size_t) override {}
  void after_backward(std::size_t offset, std::size_t size) override;
  // After the computation: starts the buckets not started yet and waits for every one. Afterwards the gradient
  // holds the mean over all the step's samples; returns their number (0: no trainer had any, nothing was summed).
  std::int64_t end();

 private:
  float weight() const;
  void start_ready();
  void start(std::size_t bucket);

  MPI_Comm trainers_;
  compute::Backend& backend_;
  std::span<float> gradient_;
  exchange::RangeProgress progress_;
  std::int64_t count_ = 0;
  std::int64_t total_ = 0;
  MPI_Request agreement_ = MPI_REQUEST_NULL;
  std::vector<bool> whole_;
  std::size_t unstarted_ = 0;  // buckets [0, unstarted_) have not started
  std::vector<MPI_Request> sums_;
};

}  // namespace pstrain::allreduce
