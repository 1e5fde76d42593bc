#pragma once
// Everything a rank knows about the job once configuration and data have been validated on every rank.
#include <chrono>
#include <string>

#include "comm/layout.h"
#include "train/data_plan.h"
#include "train/train_config.h"

namespace pstrain::train {

struct JobContext {
  TrainConfig config;
  comm::WorldLayout layout;
  DataPlan data;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  bool sync() const { return config.mode == Mode::kSync; }
  double elapsed_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
};

}  // namespace pstrain::train
