#include "compute/cuda/step_timeline.h"

#include "compute/cuda/cuda_check.h"
#include "core/error.h"

namespace pstrain::compute::cuda {

namespace {

constexpr unsigned kAllPoints = 0xF;

unsigned bit(Backend::StepPoint point) {
  return 1u << static_cast<int>(point);
}

}  // namespace

StepTimeline::StepTimeline() {
  for (auto& step : events_) {
    for (cudaEvent_t& event : step) CUDA_CHECK(cudaEventCreate(&event));
  }
}

StepTimeline::~StepTimeline() {
  for (auto& step : events_) {
    for (cudaEvent_t event : step) {
      if (event != nullptr) CUDA_CHECK_NOTHROW(cudaEventDestroy(event));
    }
  }
}

void StepTimeline::mark(Backend::StepPoint point, cudaStream_t stream) {
  if (point == Backend::StepPoint::kStart) {
    ++step_;
    marked_[static_cast<std::size_t>(slot(step_))] = 0;
  } else if (step_ < 0) {
    return;  // a step that began before the count did
  }
  CUDA_CHECK(cudaEventRecord(event(step_, point), stream));
  marked_[static_cast<std::size_t>(slot(step_))] |= bit(point);
  if (point == Backend::StepPoint::kStart && step_ >= 1) settle(step_ - 1);
}

// Adds the phases of `step` (all four points recorded) and the gap before it (from the step before's end).
void StepTimeline::settle(std::int64_t step) {
  if (marked_[static_cast<std::size_t>(slot(step))] != kAllPoints) return;
  using Point = Backend::StepPoint;
  CUDA_CHECK(cudaEventSynchronize(event(step, Point::kBackwardDone)));
  auto add = [&](Phase phase, cudaEvent_t from, cudaEvent_t to) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    total_ms_[phase] += ms;
    ++count_[phase];
  };
  add(kData, event(step, Point::kStart), event(step, Point::kBatchLoaded));
  add(kForward, event(step, Point::kBatchLoaded), event(step, Point::kForwardDone));
  add(kBackward, event(step, Point::kForwardDone), event(step, Point::kBackwardDone));
  if (step >= 1 && marked_[static_cast<std::size_t>(slot(step - 1))] == kAllPoints) {
    add(kBetween, event(step - 1, Point::kBackwardDone), event(step, Point::kStart));
  }
}

std::string StepTimeline::take_breakdown() {
  if (step_ >= 0) settle(step_);
  std::string line;
  if (count_[kForward] > 0) {
    auto mean = [&](Phase phase) { return count_[phase] > 0 ? total_ms_[phase] / count_[phase] : 0.0; };
    line = cat("GPU step time from CUDA events (mean of ", count_[kForward], " steps): data ", mean(kData),
               " ms, forward ", mean(kForward), " ms, backward ", mean(kBackward),
               " ms, between steps (exchange and host) ", mean(kBetween), " ms");
  }
  step_ = -1;
  marked_ = {};
  total_ms_ = {};
  count_ = {};
  return line;
}

}  // namespace pstrain::compute::cuda
