#include "checkpoint/checkpoint.h"

#include <unistd.h>

#include <H5Cpp.h>

#include <algorithm>
#include <cstdio>
#include <regex>

#include "checkpoint/manifest.h"
#include "checkpoint/table_rows.h"
#include "checkpoint/tensor_io.h"
#include "core/error.h"
#include "core/files.h"
#include "hdf5/attributes.h"

namespace pstrain::checkpoint {

using hdf5::open_single_attribute;
using hdf5::read_attribute;
using hdf5::read_string_attribute;
using hdf5::write_attribute;
using hdf5::write_string_attribute;

namespace fs = std::filesystem;

namespace {

const std::regex kCheckpointName("ckpt-[0-9]{10}");
constexpr const char* kTemporaryPrefix = ".ckpt-tmp-";

std::string checkpoint_name(std::int64_t global_step) {
  char name[32];
  std::snprintf(name, sizeof name, "ckpt-%010lld", static_cast<long long>(global_step));
  return name;
}

std::string shard_dataset(std::size_t shard) {
  char name[32];
  std::snprintf(name, sizeof name, "train-%05zu", shard);
  return name;
}

void write_model_file(const fs::path& path, const ModelState& model, const std::vector<nn::ParameterInfo>& parameters) {
  H5::H5File file(path.string(), H5F_ACC_TRUNC);
  write_attribute(file, "format_version", H5::PredType::NATIVE_UINT32, kFormatVersion);
  write_string_attribute(file, "optimizer", model.optimizer);
  write_attribute(file, "optimizer_steps", H5::PredType::NATIVE_UINT64, model.optimizer_steps);
  H5::Group tensors = file.createGroup("parameters");
  write_tensors(tensors, parameters, model.parameters);
  H5::Group optimizer = file.createGroup("optimizer");
  for (const auto& [name, values] : model.optimizer_state) {
    H5::Group state = optimizer.createGroup(name);
    write_tensors(state, parameters, values);
  }
  if (!model.state_layout.empty()) {
    H5::Group state = file.createGroup("state");
    write_tensors(state, model.state_layout, model.state);
  }
}

void write_training_file(const fs::path& path, const TrainingState& training) {
  H5::H5File file(path.string(), H5F_ACC_TRUNC);
  write_attribute(file, "pass", H5::PredType::NATIVE_INT64, training.pass);
  write_attribute(file, "step_in_pass", H5::PredType::NATIVE_INT64, training.step_in_pass);
  write_attribute(file, "global_step", H5::PredType::NATIVE_INT64, training.global_step);
  write_attribute(file, "seed", H5::PredType::NATIVE_UINT64, training.seed);
  H5::Group consumed = file.createGroup("consumed");
  for (std::size_t shard = 0; shard < training.consumed.size(); ++shard) {
    const hsize_t count = training.consumed[shard].size();
    H5::DataSet dataset =
        consumed.createDataSet(shard_dataset(shard), H5::PredType::NATIVE_UINT8, H5::DataSpace(1, &count));
    if (count > 0) dataset.write(training.consumed[shard].data(), H5::PredType::NATIVE_UINT8);
  }
}

void between_files(const WriteOptions& options) {
  if (options.between_files) options.between_files();
}

void prune(const fs::path& output_dir, int keep) {
  if (keep <= 0) return;
  const auto existing = list_checkpoints(output_dir);
  for (std::size_t i = static_cast<std::size_t>(keep); i < existing.size(); ++i) {
    std::error_code ignored;
    fs::remove_all(existing[i], ignored);
  }
}

}  // namespace

fs::path checkpoints_folder(const fs::path& output_dir) {
  return output_dir / "checkpoints";
}

fs::path create_checkpoint_folder(const fs::path& output_dir, std::int64_t global_step) {
  const fs::path temporary =
      checkpoints_folder(output_dir) / cat(kTemporaryPrefix, checkpoint_name(global_step), "-", ::getpid());
  std::error_code error;
  fs::create_directories(temporary, error);
  if (error) throw Error(ExitCode::kOutput, cat("cannot create ", temporary.string(), ": ", error.message()));
  return temporary;
}

void discard_checkpoint_folder(const fs::path& temporary) {
  std::error_code ignored;
  fs::remove_all(temporary, ignored);
}

fs::path publish_checkpoint(const fs::path& temporary, const fs::path& output_dir, const Checkpoint& checkpoint,
                            const std::vector<nn::ParameterInfo>& parameters, const std::string& config_ini,
                            const WriteOptions& options, const std::vector<ManifestEntry>& written) {
  const fs::path root = checkpoints_folder(output_dir);
  const fs::path final_dir = root / checkpoint_name(checkpoint.training.global_step);
  try {
    H5::Exception::dontPrint();
    try {
      write_model_file(temporary / "model.h5", checkpoint.model, parameters);
      between_files(options);
      write_training_file(temporary / "training.h5", checkpoint.training);
    } catch (const H5::Exception& failure) {
      throw Error(ExitCode::kOutput, cat("cannot write checkpoint files in ", temporary.string(), ": ",
                                         failure.getDetailMsg(), " (disk full?)"));
    }
    write_file_atomically(temporary / "config.ini", config_ini);
    between_files(options);
    std::vector<std::string> files = {"model.h5", "training.h5", "config.ini"};
    for (std::string& rows : list_table_row_files(temporary)) files.push_back(std::move(rows));
    write_manifest(temporary, files, written);
    fsync_path(temporary);
    if (fs::exists(final_dir)) fs::remove_all(final_dir);  // an older, complete copy of the same step
    fs::rename(temporary, final_dir);
    fsync_path(root);
  } catch (const fs::filesystem_error& failure) {
    discard_checkpoint_folder(temporary);
    throw Error(ExitCode::kOutput, cat("cannot publish checkpoint ", final_dir.string(), ": ", failure.what()));
  } catch (...) {
    discard_checkpoint_folder(temporary);
    throw;
  }
  prune(output_dir, options.keep);
  return final_dir;
}

fs::path write_checkpoint(const fs::path& output_dir, const Checkpoint& checkpoint,
                          const std::vector<nn::ParameterInfo>& parameters, const std::string& config_ini,
                          const WriteOptions& options) {
  const fs::path temporary = create_checkpoint_folder(output_dir, checkpoint.training.global_step);
  return publish_checkpoint(temporary, output_dir, checkpoint, parameters, config_ini, options);
}

namespace {

// A table written by rows, whole into `model`'s flat vectors. States the row files hold per row (row-wise Adagrad's)
// have no place in the flat layout and are left out; a state per element that the rows lack stays zero there.
void read_whole_table(const fs::path& folder, const nn::ParameterInfo& table, const std::vector<std::string>& states,
                      ModelState& model) {
  const TableRowsSpec spec{table.name, table.shape[0], table.shape[1]};
  const std::vector<std::string> held = table_row_states(folder, spec);
  std::vector<std::string> wanted;
  for (const std::string& name : states) {
    if (std::find(held.begin(), held.end(), name) != held.end()) wanted.push_back(name);
  }
  TableRows whole = read_table_rows(folder, spec, 0, 1, wanted);
  std::copy(whole.rows.begin(), whole.rows.end(), model.parameters.begin() + table.offset);
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    const auto at = std::find(states.begin(), states.end(), wanted[i]) - states.begin();
    std::copy(whole.state[i].begin(), whole.state[i].end(),
              model.optimizer_state[static_cast<std::size_t>(at)].second.begin() + table.offset);
  }
}

// model.h5 (and the row files of the tables written by rows), checked against this run's model and optimizer.
ModelState read_model_file(const fs::path& folder, const std::vector<nn::ParameterInfo>& parameters,
                           std::size_t flat_size, const std::string& optimizer,
                           const std::vector<nn::ParameterInfo>& state_layout) {
  ModelState model;
  const fs::path model_path = folder / "model.h5";
  try {
    const H5::H5File file(model_path.string(), H5F_ACC_RDONLY);
    const auto version = read_attribute<std::uint32_t>(file, model_path, "format_version", H5::PredType::NATIVE_UINT32);
    if (version != kFormatVersion) {
      throw Error(ExitCode::kInputData,
                  cat(model_path.string(), " has format version ", version, ", expected ", kFormatVersion));
    }
    model.optimizer = read_string_attribute(file, model_path, "optimizer");
    if (model.optimizer != optimizer) {
      throw Error(ExitCode::kInputData, cat(folder.string(), " was written with --optimizer ", model.optimizer,
                                            ", this run uses ", optimizer));
    }
    model.optimizer_steps =
        read_attribute<std::uint64_t>(file, model_path, "optimizer_steps", H5::PredType::NATIVE_UINT64);
    // Tables written by rows (table_rows.h) are not in model.h5: they are assembled from their row files.
    std::vector<nn::ParameterInfo> in_model_file;
    std::vector<nn::ParameterInfo> by_rows;
    for (const nn::ParameterInfo& parameter : parameters) {
      const bool rows = parameter.shape.size() == 2 && !file.nameExists("parameters/" + parameter.name) &&
                        holds_table_rows(folder, parameter.name);
      (rows ? by_rows : in_model_file).push_back(parameter);
    }
    model.parameters = read_tensors(file.openGroup("parameters"), model_path.string(), in_model_file, flat_size);
    const H5::Group optimizer_group = file.openGroup("optimizer");
    std::vector<std::string> state_names;
    for (hsize_t i = 0; i < optimizer_group.getNumObjs(); ++i) {
      const std::string name = optimizer_group.getObjnameByIdx(i);
      state_names.push_back(name);
      model.optimizer_state.emplace_back(name, read_tensors(optimizer_group.openGroup(name),
                                                            model_path.string() + " optimizer " + name, in_model_file,
                                                            flat_size));
    }
    for (const nn::ParameterInfo& table : by_rows) read_whole_table(folder, table, state_names, model);
    if (!state_layout.empty()) {
      if (!file.nameExists("state")) {
        throw Error(ExitCode::kInputData, cat(model_path.string(),
                                              " holds no non-trainable state (batch-norm "
                                              "statistics): it was written for another model"));
      }
      const nn::ParameterInfo& last = state_layout.back();
      model.state_layout = state_layout;
      model.state =
          read_tensors(file.openGroup("state"), model_path.string() + " state", state_layout, last.offset + last.size);
    }
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kInputData, cat("cannot read ", model_path.string(), ": ", failure.getDetailMsg()));
  }
  return model;
}

// training.h5, checked against this run's training shards.
TrainingState read_training_file(const fs::path& folder, const std::vector<std::uint64_t>& shard_sizes) {
  TrainingState training;
  const fs::path training_path = folder / "training.h5";
  try {
    const H5::H5File file(training_path.string(), H5F_ACC_RDONLY);
    training.pass = read_attribute<std::int64_t>(file, training_path, "pass", H5::PredType::NATIVE_INT64);
    training.step_in_pass =
        read_attribute<std::int64_t>(file, training_path, "step_in_pass", H5::PredType::NATIVE_INT64);
    training.global_step = read_attribute<std::int64_t>(file, training_path, "global_step", H5::PredType::NATIVE_INT64);
    training.seed = read_attribute<std::uint64_t>(file, training_path, "seed", H5::PredType::NATIVE_UINT64);
    const H5::Group consumed = file.openGroup("consumed");
    if (consumed.getNumObjs() != shard_sizes.size()) {
      throw Error(ExitCode::kInputData, cat(folder.string(), " was taken on ", consumed.getNumObjs(),
                                            " training shards; the data folder has ", shard_sizes.size()));
    }
    for (std::size_t shard = 0; shard < shard_sizes.size(); ++shard) {
      const H5::DataSet dataset = consumed.openDataSet(shard_dataset(shard));
      const auto count = static_cast<std::uint64_t>(dataset.getSpace().getSimpleExtentNpoints());
      if (count != shard_sizes[shard]) {
        throw Error(ExitCode::kInputData, cat(folder.string(), ": shard ", shard, " had ", count,
                                              " samples, the data folder's has ", shard_sizes[shard]));
      }
      const H5::DataType type = dataset.getDataType();  // one byte a sample; see read_tensors for why it matters
      if (type.getClass() != H5T_INTEGER || type.getSize() != 1) {
        throw Error(ExitCode::kInputData,
                    cat(training_path.string(), ": consumed/", shard_dataset(shard), " is not a dataset of bytes"));
      }
      training.consumed.emplace_back(count);
      if (count > 0) dataset.read(training.consumed.back().data(), H5::PredType::NATIVE_UINT8);
    }
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kInputData, cat("cannot read ", training_path.string(), ": ", failure.getDetailMsg()));
  }
  return training;
}

}  // namespace

Checkpoint read_checkpoint(const fs::path& folder, const std::vector<nn::ParameterInfo>& parameters,
                           std::size_t flat_size, const std::string& optimizer,
                           const std::vector<std::uint64_t>& shard_sizes,
                           const std::vector<nn::ParameterInfo>& state_layout,
                           const std::function<bool(const std::string&)>& checksum) {
  verify_manifest(folder, checksum);
  H5::Exception::dontPrint();
  Checkpoint checkpoint;
  checkpoint.model = read_model_file(folder, parameters, flat_size, optimizer, state_layout);
  checkpoint.training = read_training_file(folder, shard_sizes);
  return checkpoint;
}

std::vector<fs::path> list_checkpoints(const fs::path& output_dir) {
  std::vector<fs::path> found;
  const fs::path root = checkpoints_folder(output_dir);
  if (!fs::is_directory(root)) return found;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.is_directory() && std::regex_match(entry.path().filename().string(), kCheckpointName)) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.rbegin(), found.rend());
  return found;
}

std::vector<std::string> remove_stale_temporaries(const fs::path& output_dir) {
  std::vector<std::string> removed;
  const fs::path root = checkpoints_folder(output_dir);
  if (!fs::is_directory(root)) return removed;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kTemporaryPrefix, 0) == 0) {
      std::error_code ignored;
      fs::remove_all(entry.path(), ignored);
      removed.push_back(name);
    }
  }
  return removed;
}

}  // namespace pstrain::checkpoint
