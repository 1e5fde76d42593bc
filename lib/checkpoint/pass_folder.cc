#include "checkpoint/pass_folder.h"

#include <unistd.h>

#include <H5Cpp.h>

#include <algorithm>
#include <cstdio>
#include <regex>

#include "checkpoint/tensor_io.h"
#include "core/error.h"
#include "core/files.h"

namespace pstrain::checkpoint {

namespace fs = std::filesystem;

std::string pass_folder_name(int pass) {
  char name[32];
  std::snprintf(name, sizeof name, "pass-%05d", pass);
  return name;
}

namespace {

// Rows of `tensor` a block at a time (16 MB), into a dataset of its full shape.
void write_streamed(H5::H5File& file, const StreamedTensor& tensor) {
  const std::uint64_t rows = tensor.info.shape.at(0);
  const std::size_t width = tensor.info.shape.at(1);
  const hsize_t dims[2] = {rows, width};
  H5::DataSet dataset = file.createDataSet(tensor.info.name, H5::PredType::NATIVE_FLOAT, H5::DataSpace(2, dims));
  const std::uint64_t block = std::max<std::uint64_t>(1, (std::uint64_t{1} << 22) / std::max<std::size_t>(width, 1));
  std::vector<float> buffer;
  for (std::uint64_t first = 0; first < rows; first += block) {
    const std::uint64_t count = std::min(block, rows - first);
    buffer.resize(count * width);
    tensor.read(first, count, buffer);
    const hsize_t start[2] = {first, 0};
    const hsize_t extent[2] = {count, width};
    H5::DataSpace selection = dataset.getSpace();
    selection.selectHyperslab(H5S_SELECT_SET, extent, start);
    dataset.write(buffer.data(), H5::PredType::NATIVE_FLOAT, H5::DataSpace(2, extent), selection);
  }
}

// The keys of the keyed tables among `streamed`, if any, as keys/<name>.
void write_keys(H5::H5File& file, const std::vector<StreamedTensor>& streamed) {
  std::optional<H5::Group> group;
  for (const StreamedTensor& tensor : streamed) {
    if (!tensor.keys) continue;
    if (!group) group = file.createGroup(kKeysGroup);
    const hsize_t dims[1] = {tensor.keys->size()};
    H5::DataSet dataset = group->createDataSet(tensor.info.name, H5::PredType::NATIVE_INT64, H5::DataSpace(1, dims));
    if (!tensor.keys->empty()) dataset.write(tensor.keys->data(), H5::PredType::NATIVE_INT64);
  }
}

void write_parameters_file(const fs::path& path, const std::vector<nn::ParameterInfo>& parameters,
                           std::span<const float> flat, const std::vector<StreamedTensor>& streamed) {
  try {
    H5::Exception::dontPrint();
    H5::H5File file(path.string(), H5F_ACC_TRUNC);
    write_tensors(file, parameters, flat);
    for (const StreamedTensor& tensor : streamed) write_streamed(file, tensor);
    write_keys(file, streamed);
  } catch (const H5::Exception& error) {
    throw Error(ExitCode::kOutput, cat("cannot write ", path.string(), ": ", error.getDetailMsg(), " (disk full?)"));
  }
  fsync_path(path);
}

}  // namespace

void write_pass_folder(const fs::path& output_dir, int pass, const std::vector<nn::ParameterInfo>& parameters,
                       std::span<const float> flat, bool replace_existing, const std::vector<StreamedTensor>& streamed,
                       const std::vector<fs::path>& beside,
                       const std::vector<std::pair<std::string, std::string>>& texts) {
  const fs::path final_dir = output_dir / pass_folder_name(pass);
  if (fs::exists(final_dir) && !replace_existing) {
    throw Error(ExitCode::kOutput, cat(final_dir.string(), " already exists; pstrain never replaces a pass folder"));
  }
  const fs::path temporary = output_dir / cat(".", pass_folder_name(pass), ".tmp-", ::getpid());
  std::error_code error;
  fs::remove_all(temporary, error);
  fs::create_directories(temporary, error);
  if (error) throw Error(ExitCode::kOutput, cat("cannot create ", temporary.string(), ": ", error.message()));
  try {
    write_parameters_file(temporary / kParametersFile, parameters, flat, streamed);
    std::vector<ManifestEntry> entries{manifest_entry(temporary, kParametersFile)};
    for (const fs::path& file : beside) {
      fs::copy_file(file, temporary / file.filename());
      entries.push_back(manifest_entry(temporary, file.filename().string()));
    }
    for (const auto& [name, contents] : texts) {
      write_file_atomically(temporary / name, contents);
      entries.push_back(manifest_entry(temporary, name));
    }
    write_manifest(temporary, kPassManifest, entries);
    write_file_atomically(temporary / "done", cat("pass ", pass, "\n"));
    if (fs::exists(final_dir)) {  // replace_existing: move the old one aside only now that the new one is whole
      const fs::path superseded = output_dir / cat(".", pass_folder_name(pass), ".superseded-", ::getpid());
      fs::rename(final_dir, superseded);
      fs::rename(temporary, final_dir);
      fs::remove_all(superseded);
    } else {
      fs::rename(temporary, final_dir);
    }
    fsync_path(output_dir);
  } catch (const fs::filesystem_error& failure) {
    fs::remove_all(temporary, error);
    throw Error(ExitCode::kOutput, cat("cannot publish ", final_dir.string(), ": ", failure.what()));
  } catch (...) {
    fs::remove_all(temporary, error);
    throw;
  }
}

void verify_pass_folder(const fs::path& pass_dir) {
  if (!fs::exists(pass_dir / "done")) {
    throw Error(ExitCode::kInputData, cat(pass_dir.string(), " is incomplete (no done file)"));
  }
  std::error_code ec;
  if (!fs::exists(pass_dir / kManifestName, ec)) return;  // written before pass folders carried one
  for (const ManifestEntry& entry : read_manifest(pass_dir, kPassManifest)) check_listed_file(pass_dir, entry, true);
}

void refuse_keyed_tables(const fs::path& path) {
  H5::Exception::dontPrint();
  try {
    if (!H5::H5File(path.string(), H5F_ACC_RDONLY).nameExists(kKeysGroup)) return;
  } catch (const H5::Exception&) {
    return;  // the reader names what is wrong with the file
  }
  throw Error(ExitCode::kInputData, cat(path.string(), " holds tables keyed by the raw id (--table-keys exact), ",
                                        "which --init-from and evaluate --num-pservers do not read (pstrain ",
                                        "evaluate on one process or on ranks without servers, predict and export do)"));
}

namespace {

std::vector<std::int64_t> read_keys(const H5::DataSet& dataset, const fs::path& path, const std::string& name) {
  const H5::DataSpace space = dataset.getSpace();
  if (dataset.getTypeClass() != H5T_INTEGER || dataset.getDataType().getSize() != sizeof(std::int64_t) ||
      space.getSimpleExtentNdims() != 1) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": '", kKeysGroup, "/", name, "' is not int64 [n]"));
  }
  hsize_t count = 0;
  space.getSimpleExtentDims(&count);
  std::vector<std::int64_t> keys(count);
  if (count > 0) dataset.read(keys.data(), H5::PredType::NATIVE_INT64);
  for (std::size_t k = 1; k < keys.size(); ++k) {
    if (keys[k - 1] >= keys[k]) {
      throw Error(ExitCode::kInputData, cat(path.string(), ": the keys of ", name, " are not strictly ascending (",
                                            keys[k - 1], " then ", keys[k], " at ", k, ")"));
    }
  }
  return keys;
}

}  // namespace

std::map<std::string, std::vector<std::int64_t>> read_pass_keys(const fs::path& pass_dir) {
  const fs::path path = pass_dir / kParametersFile;
  std::map<std::string, std::vector<std::int64_t>> keys;
  try {
    H5::Exception::dontPrint();
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    if (!file.nameExists(kKeysGroup)) return keys;
    const H5::Group group = file.openGroup(kKeysGroup);
    for (hsize_t i = 0; i < group.getNumObjs(); ++i) {
      const std::string name = group.getObjnameByIdx(i);
      keys[name] = read_keys(group.openDataSet(name), path, name);
    }
  } catch (const H5::Exception& error) {
    throw Error(ExitCode::kInputData, cat("cannot read ", path.string(), ": ", error.getDetailMsg()));
  }
  return keys;
}

PassTable read_pass_table(const fs::path& pass_dir, const std::string& name) {
  const fs::path path = pass_dir / kParametersFile;
  try {
    H5::Exception::dontPrint();
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    if (!file.nameExists(name)) throw Error(ExitCode::kInputData, cat(path.string(), " has no table '", name, "'"));
    const H5::DataSet dataset = file.openDataSet(name);
    const H5::DataSpace space = dataset.getSpace();
    hsize_t dims[2] = {0, 0};
    if (dataset.getTypeClass() != H5T_FLOAT || dataset.getDataType().getSize() != sizeof(float) ||
        space.getSimpleExtentNdims() != 2) {
      throw Error(ExitCode::kInputData, cat(path.string(), ": '", name, "' is not a 2-D tensor of 32-bit floats"));
    }
    space.getSimpleExtentDims(dims);
    PassTable table{dims[0], static_cast<std::size_t>(dims[1]), std::vector<float>(dims[0] * dims[1])};
    if (!table.values.empty()) dataset.read(table.values.data(), H5::PredType::NATIVE_FLOAT);
    return table;
  } catch (const H5::Exception& error) {
    throw Error(ExitCode::kInputData, cat("cannot read ", path.string(), ": ", error.getDetailMsg()));
  }
}

std::vector<float> read_pass_parameters(const fs::path& pass_dir, const std::vector<nn::ParameterInfo>& parameters,
                                        std::size_t flat_size, KeyedTables keyed) {
  if (!fs::is_directory(pass_dir)) {
    throw Error(ExitCode::kInputData, cat("--init-from ", pass_dir.string(), ": no such pass folder"));
  }
  verify_pass_folder(pass_dir);
  const fs::path path = pass_dir / kParametersFile;
  if (keyed == KeyedTables::kRefuse) refuse_keyed_tables(path);
  try {
    H5::Exception::dontPrint();
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    return read_tensors(file, path.string(), parameters, flat_size);
  } catch (const H5::Exception& error) {
    throw Error(ExitCode::kInputData, cat("cannot read ", path.string(), ": ", error.getDetailMsg()));
  }
}

std::vector<float> read_pass_state(const fs::path& pass_dir, const std::vector<nn::ParameterInfo>& state,
                                   std::size_t flat_size) {
  if (state.empty()) return {};
  const fs::path path = pass_dir / kParametersFile;
  try {
    H5::Exception::dontPrint();
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    return read_tensors(file, path.string(), state, flat_size);
  } catch (const H5::Exception& error) {
    throw Error(ExitCode::kInputData, cat("cannot read ", path.string(), ": ", error.getDetailMsg()));
  }
}

std::vector<fs::path> list_pass_folders(const fs::path& output_dir) {
  std::vector<fs::path> folders;
  if (!fs::is_directory(output_dir)) return folders;
  static const std::regex pattern("pass-[0-9]{5}");
  for (const auto& entry : fs::directory_iterator(output_dir)) {
    if (entry.is_directory() && std::regex_match(entry.path().filename().string(), pattern)) {
      folders.push_back(entry.path());
    }
  }
  std::sort(folders.begin(), folders.end());
  return folders;
}

}  // namespace pstrain::checkpoint
