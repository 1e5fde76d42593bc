#pragma once
// Where a training step's GPU time goes, measured with CUDA events on the backend's stream: host clocks stop when
// the host has queued the work, not when the GPU has done it, so they cannot split a step whose kernels run
// asynchronously. Four points per step (Backend::StepPoint) give four phases:
//   data      kStart -> kBatchLoaded        the batch's upload
//   forward   kBatchLoaded -> kForwardDone  the layers and the loss
//   backward  kForwardDone -> kBackwardDone
//   between   kBackwardDone -> next kStart  the exchange (gradient out, parameters in) and the host's own work
//                                           (batch assembly, MPI waits): the GPU idles here unless NCCL runs
// Events of three consecutive steps are kept (a ring), so reading step k-1's times at step k+1's start never
// waits: its events were passed long ago.
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>

#include "compute/backend.h"

namespace pstrain::compute::cuda {

class StepTimeline {
 public:
  StepTimeline();
  ~StepTimeline();
  StepTimeline(const StepTimeline&) = delete;
  StepTimeline& operator=(const StepTimeline&) = delete;

  // Records the point's event on `stream`. A kStart settles the step before the last one.
  void mark(Backend::StepPoint point, cudaStream_t stream);
  // "GPU step time from CUDA events (mean of N steps): data .. ms, forward .. ms, ..."; empty when no step was
  // complete. Starts a new count (the next kStart has no step before it).
  std::string take_breakdown();

 private:
  static constexpr int kPoints = 4;
  static constexpr int kRing = 3;
  enum Phase { kData, kForward, kBackward, kBetween, kPhases };

  void settle(std::int64_t step);
  int slot(std::int64_t step) const { return static_cast<int>(step % kRing); }
  cudaEvent_t event(std::int64_t step, Backend::StepPoint point) const {
    return events_[slot(step)][static_cast<int>(point)];
  }

  std::array<std::array<cudaEvent_t, kPoints>, kRing> events_{};
  std::array<unsigned, kRing> marked_{};  // bit p: point p recorded for the step in that slot
  std::int64_t step_ = -1;                // the step being marked; -1 before the first kStart of a count
  std::array<double, kPhases> total_ms_{};
  std::array<std::int64_t, kPhases> count_{};
};

}  // namespace pstrain::compute::cuda
