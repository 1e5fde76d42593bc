#include "checkpoint/trainer_states.h"

#include <H5Cpp.h>

#include <algorithm>
#include <cstdio>
#include <regex>

#include "checkpoint/tensor_io.h"
#include "core/error.h"

namespace pstrain::checkpoint {

namespace fs = std::filesystem;

namespace {

constexpr const char* kStateGroup = "optimizer";

const std::regex& trainer_file_pattern() {
  static const std::regex pattern("trainer-([0-9]{5})-of-([0-9]{5})\\.h5");
  return pattern;
}

// The trainer-state files of `folder`, in trainer order; every one of the same run (one count of trainers).
std::vector<fs::path> saved_trainer_files(const fs::path& folder) {
  std::vector<std::pair<int, fs::path>> found;
  int of = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    std::smatch match;
    if (!std::regex_match(name, match, trainer_file_pattern())) continue;
    const int count = std::stoi(match[2].str());
    if (of != 0 && count != of) {
      throw Error(ExitCode::kInputData, cat(folder.string(), ": trainer state files of ", of, " and of ", count,
                                            " trainers: it mixes checkpoints"));
    }
    of = count;
    found.emplace_back(std::stoi(match[1].str()), entry.path());
  }
  std::sort(found.begin(), found.end());
  if (found.empty() || static_cast<int>(found.size()) != of) {
    throw Error(ExitCode::kInputData, cat(folder.string(), " holds ", found.size(), " trainer state files of ", of,
                                          ": the trainers' optimizer state (--mode geo) is incomplete"));
  }
  std::vector<fs::path> files;
  for (auto& [trainer, path] : found) files.push_back(std::move(path));
  return files;
}

OptimizerVectors read_file(const fs::path& file, const std::vector<std::string>& names,
                           const std::vector<nn::ParameterInfo>& parameters, std::size_t flat_size) {
  OptimizerVectors state;
  try {
    const H5::H5File h5(file.string(), H5F_ACC_RDONLY);
    const H5::Group group = h5.openGroup(kStateGroup);
    for (const std::string& name : names) {
      if (!group.nameExists(name)) {
        throw Error(ExitCode::kInputData, cat(file.string(), " holds no optimizer state '", name,
                                              "': it was written with another --optimizer"));
      }
      state.emplace_back(name, read_tensors(group.openGroup(name), file.string() + " " + name, parameters, flat_size));
    }
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kInputData, cat("cannot read ", file.string(), ": ", failure.getDetailMsg()));
  }
  return state;
}

// The element-wise mean of every file's state, summed in trainer order in double.
OptimizerVectors mean_state(const std::vector<fs::path>& files, const std::vector<std::string>& names,
                            const std::vector<nn::ParameterInfo>& parameters, std::size_t flat_size) {
  std::vector<std::vector<double>> sums(names.size(), std::vector<double>(flat_size, 0.0));
  for (const fs::path& file : files) {
    const OptimizerVectors state = read_file(file, names, parameters, flat_size);
    for (std::size_t v = 0; v < names.size(); ++v) {
      std::transform(sums[v].begin(), sums[v].end(), state[v].second.begin(), sums[v].begin(),
                     [](double sum, float value) { return sum + value; });
    }
  }
  OptimizerVectors mean;
  for (std::size_t v = 0; v < names.size(); ++v) {
    std::vector<float> values(flat_size);
    std::transform(sums[v].begin(), sums[v].end(), values.begin(),
                   [&](double sum) { return static_cast<float>(sum / static_cast<double>(files.size())); });
    mean.emplace_back(names[v], std::move(values));
  }
  return mean;
}

}  // namespace

std::string trainer_state_file(int trainer, int trainers) {
  char name[64];
  std::snprintf(name, sizeof(name), "trainer-%05d-of-%05d.h5", trainer, trainers);
  return name;
}

bool is_trainer_state_file(const std::string& name) {
  return std::regex_match(name, trainer_file_pattern());
}

void write_trainer_state(const fs::path& folder, int trainer, int trainers,
                         const std::vector<nn::ParameterInfo>& parameters, const OptimizerVectors& state) {
  const fs::path file = folder / trainer_state_file(trainer, trainers);
  try {
    H5::H5File h5(file.string(), H5F_ACC_EXCL);
    H5::Group group = h5.createGroup(kStateGroup);
    for (const auto& [name, values] : state) {
      H5::Group vector = group.createGroup(name);
      write_tensors(vector, parameters, values);
    }
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kOutput, cat("cannot write ", file.string(), ": ", failure.getDetailMsg()));
  }
}

ResumedTrainerState read_trainer_state(const fs::path& folder, int trainer, int trainers,
                                       const std::vector<std::string>& names,
                                       const std::vector<nn::ParameterInfo>& parameters, std::size_t flat_size) {
  const std::vector<fs::path> files = saved_trainer_files(folder);
  const int saved = static_cast<int>(files.size());
  if (saved == trainers) return {read_file(files[trainer], names, parameters, flat_size), saved};
  return {mean_state(files, names, parameters, flat_size), saved};
}

}  // namespace pstrain::checkpoint
