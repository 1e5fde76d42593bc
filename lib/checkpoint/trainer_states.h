#pragma once
// The optimizer state each trainer keeps of its own while the servers hold the model (--mode geo: every trainer
// runs the recipe's optimizer on its own copy between meetings, its momentum or Adam moments carried across
// them, as local-SGD practice does). A checkpoint holds one file per trainer,
//   trainer-NNNNN-of-MMMMM.h5   /optimizer/<state>/<parameter> as full tensors (the model's layout)
// written by the trainer itself into the checkpoint's temporary folder (checkpoint.h), listed in its MANIFEST.
// A resume with as many trainers gives each its own state back (bit-identical); a resume with another number
// takes, for every trainer, the element-wise mean of the saved trainers' states (in trainer order, in double):
// the new trainers start alike, from what the run's trainers had on average.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "nn/model.h"

namespace pstrain::checkpoint {

// An optimizer's state vectors by name, each flat over the model's layout.
using OptimizerVectors = std::vector<std::pair<std::string, std::vector<float>>>;

std::string trainer_state_file(int trainer, int trainers);
bool is_trainer_state_file(const std::string& name);

// Writes trainer `trainer`'s file of `trainers` into `folder`. Throws Error(kOutput) naming the file.
void write_trainer_state(const std::filesystem::path& folder, int trainer, int trainers,
                         const std::vector<nn::ParameterInfo>& parameters, const OptimizerVectors& state);

// What trainer `trainer` of a run of `trainers` resumes with (see above), its vectors named as `names`, and how many
// trainers saved theirs. Throws Error(kInputData) naming the folder when it holds no trainer states, files of
// different runs, or a state missing.
struct ResumedTrainerState {
  OptimizerVectors state;
  int saved_trainers = 0;
};
ResumedTrainerState read_trainer_state(const std::filesystem::path& folder, int trainer, int trainers,
                                       const std::vector<std::string>& names,
                                       const std::vector<nn::ParameterInfo>& parameters, std::size_t flat_size);

}  // namespace pstrain::checkpoint
