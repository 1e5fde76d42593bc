#include "modes/exchanges.h"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <limits>
#include <optional>
#include <vector>

#include "allreduce/bucket_stream.h"
#include "allreduce/summation.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"

namespace pstrain::modes {

namespace {

// Collective over `trainers`: true when every trainer's `parameters` have the same CRC-32.
bool replicas_agree(std::span<const float> parameters, MPI_Comm trainers) {
  // zlib's crc32 takes at most UINT_MAX bytes per call.
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = reinterpret_cast<const Bytef*>(parameters.data());
  std::size_t left = parameters.size_bytes();
  while (left > 0) {
    const auto piece = static_cast<uInt>(std::min<std::size_t>(left, std::numeric_limits<uInt>::max()));
    crc = crc32(crc, bytes, piece);
    bytes += piece;
    left -= piece;
  }
  // One reduction gives both the largest and (as UINT32_MAX minus the largest complement) the smallest CRC.
  std::uint32_t extremes[2] = {static_cast<std::uint32_t>(crc), UINT32_MAX - static_cast<std::uint32_t>(crc)};
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_UINT32_T, MPI_MAX, trainers));
  return extremes[0] == UINT32_MAX - extremes[1];
}

class AllreduceExchange final : public exchange::GradientExchange,
                                public exchange::ComputationOverlap,
                                public exchange::InPlaceCombination {
 public:
  AllreduceExchange(std::unique_ptr<optim::Optimizer> optimizer, std::span<const float> initial,
                    std::unique_ptr<allreduce::Summation> summation, const AllreduceSetup& setup)
      : optimizer_(std::move(optimizer)),
        initial_(initial),
        summation_(std::move(summation)),
        setup_(setup),
        sums_in_backend_(setup.backend->host_accessible() || summation_->sums_device_memory()),
        host_sum_(sums_in_backend_ ? 0 : setup.length) {
    PSTRAIN_ASSERT(setup_.backend != nullptr && setup_.backend_gradient != nullptr && setup_.length == initial_.size(),
                   "all-reduce exchange set up for ", setup_.length, " parameters, initial vector ", initial_.size());
  }

  void start(std::span<float> parameters) override { std::ranges::copy(initial_, parameters.begin()); }
  exchange::ComputationOverlap* overlap() override { return this; }
  exchange::InPlaceCombination* in_place_combination() override { return this; }

  // Agrees on the step's sample count and flags. Where the summation can read the model's gradient buffer (NCCL
  // on GPU memory, MPI on the CPU backend's host memory) it also leaves sum_t (n_t / N) g_t there, the gradient of
  // the mean loss over all N samples of the step as one trainer with batch N would get it, and returns true.
  // Otherwise (GPU trainers without NCCL) step() sums the host copy of the gradient that the trainer makes anyway,
  // rather than copying it out, back in and out again.
  nn::ParameterStream* stream_in_place(std::span<const float>, std::span<float>) override {
    // The buckets are summed where the model keeps its gradient: host memory that MPI reads (the CPU backend).
    if (setup_.stream_bucket_floats == 0 || !setup_.backend->host_accessible() || summation_->sums_device_memory()) {
      return nullptr;
    }
    buckets_.emplace(setup_.trainers, *setup_.backend, std::span<float>(setup_.backend_gradient, setup_.length),
                     setup_.stream_bucket_floats);
    return &*buckets_;
  }
  void begin_step(std::size_t count) override {
    if (buckets_) buckets_->begin(count);
  }

  bool combine_in_place(std::size_t count, int& flags) override {
    const comm::Watchdog::Wait wait("an all-reduce step");
    const auto start = Clock::now();
    // Streaming: every bucket starts before the agreement below, on every trainer (bucket_stream.h).
    if (buckets_) buckets_->end();
    std::int64_t agreed[3] = {static_cast<std::int64_t>(count), (flags & exchange::kCheckpointNow) ? 1 : 0,
                              (flags & exchange::kStopAfterCheckpoint) ? 1 : 0};
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, agreed, 3, MPI_INT64_T, MPI_SUM, setup_.trainers));
    step_samples_ = agreed[0];
    flags = (agreed[1] > 0 ? exchange::kCheckpointNow : 0) | (agreed[2] > 0 ? exchange::kStopAfterCheckpoint : 0);
    if (step_samples_ > 0 && sums_in_backend_ && !buckets_) {
      if (count == 0) {  // the buffer holds an older step's gradient: it must count for nothing
        setup_.backend->fill(setup_.backend_gradient, setup_.length, 0.0f);
      } else {
        setup_.backend->scale(setup_.backend_gradient, setup_.length, weight(count));
      }
      summation_->sum(setup_.backend_gradient, setup_.length);
    }
    timers_.allreduce_seconds += seconds_since(start);
    return sums_in_backend_;
  }

  // `gradient` is the average already (summed in backend memory), or this trainer's own (summed here).
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace&, std::span<float> parameters,
            int&) override {
    if (step_samples_ == 0) return;  // no trainer had samples: nothing to apply
    std::span<const float> average = gradient;
    if (!sums_in_backend_) {  // the same multiply and sum as in backend memory, so the same bits
      const auto start = Clock::now();
      const float factor = weight(count);
      std::ranges::transform(gradient, host_sum_.begin(), [factor](float value) { return value * factor; });
      summation_->sum(host_sum_.data(), host_sum_.size());
      average = host_sum_;
      timers_.allreduce_seconds += seconds_since(start);
    }
    const auto start = Clock::now();
    optimizer_->step(parameters, average);
    timers_.update_seconds += seconds_since(start);
    staleness_.record(0);
    ++steps_;
    if (setup_.check_every_steps > 0 && steps_ % setup_.check_every_steps == 0) verify(parameters);
  }

  void finish_pass(std::span<float> parameters) override { verify(parameters); }
  void finish() override {}
  optim::Optimizer* own_optimizer() override { return optimizer_.get(); }

 private:
  // This trainer's share of the step's mean gradient.
  float weight(std::size_t count) const {
    return static_cast<float>(static_cast<double>(count) / static_cast<double>(step_samples_));
  }

  void verify(std::span<const float> parameters) {
    const comm::Watchdog::Wait wait("the replica check of the all-reduce trainers");
    if (replicas_agree(parameters, setup_.trainers)) return;
    int rank = 0;
    MPI_CHECK(MPI_Comm_rank(setup_.trainers, &rank));
    if (rank == 0) {  // one message for the whole job, as for every failure all ranks agree on
      std::cerr << "pstrain: error: trainer replicas diverged: their parameters differ after update " << steps_
                << " although all-reduce gives every trainer the same gradient (a non-deterministic reduction or a "
                   "memory fault); stopping rather than training inconsistent models"
                << std::endl;
    }
    throw AgreedFailure(ExitCode::kInternal);  // every trainer reached the same verdict
  }

  std::unique_ptr<optim::Optimizer> optimizer_;
  std::span<const float> initial_;  // the job's, until start()
  std::unique_ptr<allreduce::Summation> summation_;
  AllreduceSetup setup_;
  bool sums_in_backend_;
  std::vector<float> host_sum_;  // the host-side sum when the summation cannot read backend memory
  std::int64_t step_samples_ = 0;
  std::int64_t steps_ = 0;
  std::optional<allreduce::BucketStream> buckets_;  // streaming (stream_in_place)
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_allreduce_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                                    std::span<const float> initial,
                                                                    std::unique_ptr<allreduce::Summation> summation,
                                                                    const AllreduceSetup& setup) {
  return std::make_unique<AllreduceExchange>(std::move(optimizer), initial, std::move(summation), setup);
}

}  // namespace pstrain::modes
