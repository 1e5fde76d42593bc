#pragma once
// A job's compute profile for the SimGrid dry-run (benchmarks/scale/README.md): what pstrain-calibrate measured
// with the real kernels on this machine (or what a user writes for another CPU or GPU), and what the simulated
// trainers then spend instead of computing. Plain text, one record a line:
//   model mlp                         the preset (or a name; only a label)
//   batch 64                          samples per step per trainer the times below are for
//   parameter fc1.weight 200704       the flat vector's parameters in order (the shard plan is built from them)
//   layer fc1 0.000120 0.000250       per layer: forward and backward seconds for one batch
//   trainer_bytes 12345678            a trainer's model memory (parameters, gradients, activations, workspaces)
//   baseline_bytes 199229440          a rank's resident memory before any model (MPI, BLAS, libraries)
//   table embed.weight 14114 60 4     a parameter the servers hold by rows (ps/table_plan.h): rows, floats per
//                                     row, ids per sample (a sample's features are the ids it looks up)
//   ids 17 3 0 912 ...                one batch's features (batch x ids per sample ids), as the data gives them:
//                                     the rows a simulated step fetches and pushes; several lines, used in turn
// Lines starting with '#' are comments.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace pstrain::simulation {

struct ProfiledLayer {
  std::string name;
  double forward_seconds = 0;
  double backward_seconds = 0;
};

struct ProfiledParameter {
  std::string name;
  std::size_t size = 0;
};

struct ProfiledTable {
  std::string parameter;  // its parameter's name
  std::uint64_t rows = 0;
  std::size_t width = 0;
  std::size_t ids_per_sample = 0;
};

struct JobProfile {
  std::string model;
  std::size_t batch = 0;
  std::vector<ProfiledParameter> parameters;
  std::vector<ProfiledLayer> layers;
  std::size_t trainer_bytes = 0;
  std::size_t baseline_bytes = 0;
  std::vector<ProfiledTable> tables;                   // at most one: the batches' features are its ids
  std::vector<std::vector<std::uint64_t>> id_batches;  // with a table: batch x ids_per_sample ids each

  std::vector<std::size_t> parameter_sizes() const;
  // The flat-vector ranges {offset, size} of the parameters of `layer` (named "<layer>.<tensor>").
  std::vector<std::pair<std::size_t, std::size_t>> parameter_ranges(const std::string& layer) const;
  std::size_t parameter_count() const;
  double step_seconds() const;  // every layer's forward and backward
  // The flat-vector offset of parameter `name`; Error(kInputData) when the profile has none of that name.
  std::size_t parameter_offset(const std::string& name) const;
};

// Writes to a temporary name, then renames. Throws pstrain::Error(kOutput) when it cannot.
void write_profile(const JobProfile& profile, const std::filesystem::path& path);
// Throws pstrain::Error(kInputData) naming the file and line of anything it cannot read.
JobProfile read_profile(const std::filesystem::path& path);

}  // namespace pstrain::simulation
