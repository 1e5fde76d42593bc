#pragma once
// Non-trainable model state (batch-norm running statistics) with several trainers. The rule, stated here once:
// each trainer moves its own statistics with its own batches; at the end of every pass (before evaluation and the
// pass folder) and at every checkpoint, all trainers replace theirs by the mean over the trainers. So every trainer
// evaluates and saves the same model, checkpoints hold the mean, and a resumed run continues from what the
// uninterrupted run had at that point. Servers never see the state: it is not a parameter.
#include <mpi.h>

#include <span>
#include <vector>

#include "nn/model.h"

namespace pstrain::run_common {

class ModelStateAverage {
 public:
  ModelStateAverage(nn::Model& model, MPI_Comm trainers);

  // Collective over the trainers (a no-op without state). The mean is summed on the first trainer in trainer
  // order and broadcast, so every trainer holds the same bits. Afterwards state() is the model's state.
  void average();
  // The model's state as of the last average() (host memory).
  std::span<const float> state() const { return state_; }

 private:
  nn::Model& model_;
  MPI_Comm trainers_;
  int trainer_count_ = 1;
  std::vector<float> state_;
  std::vector<float> sum_;
};

}  // namespace pstrain::run_common
