#pragma once
// What a rank brings into training once configuration, data and any checkpoint are validated.
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "data/shard.h"
#include "nn/model_plan.h"
#include "run_common/checkpointing.h"
#include "run_common/run_schedule.h"
#include "run_common/trainer_samples.h"

namespace pstrain::run_common {

// What a rank brings into training once everything is validated.
struct RunState {
  TrainerSamples samples;                     // trainers
  std::optional<data::Samples> test;          // the lead trainer
  std::optional<data::Samples> valid;         // the lead trainer, where the data has a validation shard
  std::optional<double> training_click_rate;  // the lead trainer, on CTR data (run_common/data_plan.h)
  // Local and all-reduce: the starting parameters (seed or --init-from). Servers draw or read their share of them
  // as they start (server_start.h).
  std::vector<float> initial;
  // The checkpoint resumed from, its model state in the dense layout (the servers' dense blocks:
  // run_common/table_layout.h).
  std::optional<checkpoint::Checkpoint> resumed;
  std::filesystem::path resumed_from;  // the checkpoint folder, whose row files the servers read
  std::unique_ptr<RunSchedule> schedule;
  std::unique_ptr<CheckpointWriter> writer;
};

inline std::vector<std::size_t> parameter_sizes(const nn::ModelPlan& model) {
  std::vector<std::size_t> sizes;
  for (const auto& parameter : model.parameters) sizes.push_back(parameter.size);
  return sizes;
}

}  // namespace pstrain::run_common
