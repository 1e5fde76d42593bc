#include "fault_hooks.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "opaque_backend.h"

namespace pstrain::faults {

namespace {

void pause_ms(int milliseconds) {
  std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
}

// Zeros appended to `path` until its file system has at most 64 KiB left (or refuses more).
void fill_file_system(const std::string& path) {
  std::ofstream filler(path, std::ios::binary | std::ios::app);
  const std::vector<char> block(64 * 1024, 0);
  while (filler && std::filesystem::space(std::filesystem::path(path).parent_path()).available > block.size()) {
    filler.write(block.data(), static_cast<std::streamsize>(block.size()));
    filler.flush();
  }
}

}  // namespace

// All-reduce: after the chosen step the last trainer's copy is one ulp off, a replica that drifted.
void FaultHooks::parameters_received(const run_common::StepEvent& step, std::span<float> parameters) {
  if (faults_.perturb_replica_step == step.global_step && step.trainer == step.trainers - 1) {
    parameters[0] = std::nextafter(parameters[0], 1e30f);
  }
}

// The slow trainer's whole step (compute and exchange) takes slow_factor times as long.
void FaultHooks::step_computed(const run_common::StepEvent& step, double seconds) {
  if (faults_.slow_factor > 1 && faults_.slow_trainer == step.trainer) {
    std::this_thread::sleep_for(std::chrono::duration<double>((faults_.slow_factor - 1) * seconds));
  }
}

void FaultHooks::step_reported(const run_common::StepEvent& step) {
  if (!faults_.fill_disk.empty() && step.trainer == 0 && !disk_filled_) {
    fill_file_system(faults_.fill_disk);
    disk_filled_ = true;
  }
  if (faults_.delays(step.trainer)) pause_ms(faults_.step_delay_ms);
}

void FaultHooks::between_checkpoint_files() {
  if (faults_.checkpoint_delay_ms > 0) pause_ms(faults_.checkpoint_delay_ms);
}

void FaultHooks::before_leaving(int trainer) {
  if (faults_.leave_delay_ms > 0 && trainer == faults_.slow_trainer) pause_ms(faults_.leave_delay_ms);
}

std::unique_ptr<compute::Backend> FaultHooks::trainer_backend(const std::string& /*device*/) {
  return faults_.opaque_backend ? make_opaque_cpu_backend() : nullptr;
}

}  // namespace pstrain::faults
