#pragma once
// The faults PSTRAIN_TEST_HOOKS asks for (test_hooks.h), injected into the job as run hooks (run_common/run_hooks.h),
// at the points where the trainer used to inject them itself: the tests time their kills and compare their bits on
// these exact points.
#include "run_common/run_hooks.h"
#include "test_hooks.h"

namespace pstrain::faults {

class FaultHooks final : public run_common::RunHooks {
 public:
  explicit FaultHooks(const TestHooks& faults) : faults_(faults) {}

  void parameters_received(const run_common::StepEvent& step, std::span<float> parameters) override;
  void step_computed(const run_common::StepEvent& step, double seconds) override;
  void step_reported(const run_common::StepEvent& step) override;
  void between_checkpoint_files() override;
  void before_leaving(int trainer) override;
  std::unique_ptr<compute::Backend> trainer_backend(const std::string& device) override;
  int ranks_per_node() override { return faults_.ranks_per_node; }

 private:
  TestHooks faults_;
  bool disk_filled_ = false;
};

}  // namespace pstrain::faults
