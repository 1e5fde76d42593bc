#include "checkpoint/table_rows.h"

#include <H5Cpp.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <regex>

#include "checkpoint/pass_folder.h"
#include "core/error.h"
#include "hdf5/attributes.h"
#include "hdf5/dataset_storage.h"

namespace pstrain::checkpoint {

using hdf5::open_single_attribute;
using hdf5::read_attribute;
using hdf5::read_string_attribute;
using hdf5::write_attribute;
using hdf5::write_string_attribute;

namespace fs = std::filesystem;

namespace {

constexpr const char* kRowsDataset = "rows";
constexpr const char* kStateGroup = "optimizer";
constexpr std::uint64_t kBlockFloats = std::uint64_t{1} << 22;  // 16 MB read at a time

const std::regex& row_file_pattern() {
  static const std::regex pattern("rows-(.+)-([0-9]{5})-of-([0-9]{5})\\.h5");
  return pattern;
}

void write_rows(H5::Group& group, const char* name, std::uint64_t rows, std::size_t width,
                std::span<const float> values) {
  const hsize_t dims[2] = {rows, width};
  H5::DataSet dataset = group.createDataSet(name, H5::PredType::NATIVE_FLOAT, H5::DataSpace(2, dims));
  if (!values.empty()) dataset.write(values.data(), H5::PredType::NATIVE_FLOAT);
}

// The floats per row of an optimizer state vector of `floats` over `local_rows` rows: the table's width (a state
// per element) or 1 (a state per row). A shard without rows has the table's width by convention.
std::size_t state_width(std::size_t floats, std::uint64_t local_rows, std::size_t table_width) {
  if (local_rows == 0) return table_width;
  const std::size_t width = floats / local_rows;
  PSTRAIN_ASSERT(width * local_rows == floats && (width == table_width || width == 1), "an optimizer state of ", floats,
                 " floats over ", local_rows, " rows of width ", table_width);
  return width;
}

// Where one source shard's rows lie: a row file of a table written by rows, or model.h5 holding it whole (1 of 1).
struct Source {
  fs::path file;
  std::string rows_dataset;                                      // "rows", or "parameters/<table>"
  std::function<std::string(const std::string&)> state_dataset;  // optimizer state name -> its dataset
  int shard = 0;
  int shards = 1;
};

std::vector<Source> sources(const fs::path& folder, const TableRowsSpec& table) {
  std::vector<Source> found;
  int shards = 0;
  for (const std::string& name : list_table_row_files(folder)) {
    std::smatch match;
    std::regex_match(name, match, row_file_pattern());
    if (match[1].str() != table.name) continue;
    const int of = std::stoi(match[3].str());
    if (shards != 0 && of != shards) {
      throw Error(ExitCode::kInputData, cat(folder.string(), ": row files of ", table.name,
                                            " disagree on the number of shards (", shards, " and ", of, ")"));
    }
    shards = of;
    found.push_back({folder / name, kRowsDataset, [](const std::string& state) { return cat(kStateGroup, "/", state); },
                     std::stoi(match[2].str()), of});
  }
  if (found.empty()) {  // written with the table whole
    const std::string name = table.name;
    return {{folder / "model.h5", cat("parameters/", name),
             [name](const std::string& state) { return cat(kStateGroup, "/", state, "/", name); }, 0, 1}};
  }
  std::sort(found.begin(), found.end(), [](const Source& a, const Source& b) { return a.shard < b.shard; });
  for (int shard = 0; shard < shards; ++shard) {
    if (shard >= static_cast<int>(found.size()) || found[static_cast<std::size_t>(shard)].shard != shard) {
      throw Error(ExitCode::kInputData,
                  cat(folder.string(), ": ", table_rows_file(table.name, shard, shards), " is missing"));
    }
  }
  return found;
}

void check_attributes(const H5::H5File& file, const Source& source, const TableRowsSpec& table) {
  if (source.rows_dataset != kRowsDataset) return;  // model.h5: its shapes are checked by the dataset's dims
  if (file.attrExists("keyed")) {
    throw Error(ExitCode::kInputData, cat(source.file.string(), " holds table ", table.name,
                                          " keyed by the raw id (--table-keys exact); this run hashes its ids"));
  }
  const std::string written = read_string_attribute(file, source.file, "table");
  const auto rows = read_attribute<std::uint64_t>(file, source.file, "rows", H5::PredType::NATIVE_UINT64);
  const auto width = read_attribute<std::uint64_t>(file, source.file, "width", H5::PredType::NATIVE_UINT64);
  if (written != table.name || rows != table.rows || width != table.width) {
    throw Error(ExitCode::kInputData,
                cat(source.file.string(), " holds table ", written, " of ", rows, " x ", width, "; this model's ",
                    table.name, " is ", table.rows, " x ", table.width, " (saved from another model?)"));
  }
}

// Copies the rows of `dataset` (source shard k of K: local row j is row j * K + k), `width` floats each (the
// table's, or 1 for a per-row optimizer state), that shard s of S holds into their places in `out` (local row r /
// S), a block of rows at a time.
void pick_rows(const H5::DataSet& dataset, const fs::path& file, const std::string& name, const TableRowsSpec& table,
               std::size_t width, const Source& source, int shard, int shards, std::span<float> out) {
  if (dataset.getTypeClass() != H5T_FLOAT || dataset.getDataType().getSize() != sizeof(float)) {
    throw Error(ExitCode::kInputData, cat(file.string(), ": '", name, "' is not a dataset of 32-bit floats"));
  }
  const H5::DataSpace space = dataset.getSpace();
  const std::uint64_t local_rows = rows_of_shard(table.rows, source.shard, source.shards);
  hsize_t dims[2] = {0, 0};
  // A shard without rows writes its empty states at the table's width (state_width).
  if (space.getSimpleExtentNdims() != 2 || (space.getSimpleExtentDims(dims), dims[0] != local_rows) ||
      (dims[1] != width && local_rows != 0)) {
    throw Error(ExitCode::kInputData, cat(file.string(), ": '", name, "' is not ", local_rows, " x ", width));
  }
  hdf5::check_dataset_storage(dataset, file.string(), name, local_rows * width * sizeof(float));
  const auto k = static_cast<std::uint64_t>(source.shard);
  const auto K = static_cast<std::uint64_t>(source.shards);
  const auto s = static_cast<std::uint64_t>(shard);
  const auto S = static_cast<std::uint64_t>(shards);
  const std::uint64_t block = std::max<std::uint64_t>(1, kBlockFloats / std::max<std::size_t>(width, 1));
  std::vector<float> buffer;
  for (std::uint64_t first = 0; first < local_rows; first += block) {
    const std::uint64_t count = std::min(block, local_rows - first);
    buffer.resize(count * width);
    const hsize_t start[2] = {first, 0};
    const hsize_t extent[2] = {count, width};
    H5::DataSpace selection = dataset.getSpace();
    selection.selectHyperslab(H5S_SELECT_SET, extent, start);
    const H5::DataSpace memory(2, extent);
    dataset.read(buffer.data(), H5::PredType::NATIVE_FLOAT, memory, selection);
    for (std::uint64_t j = 0; j < count; ++j) {
      const std::uint64_t row = (first + j) * K + k;
      if (row % S != s) continue;
      std::copy_n(buffer.data() + j * width, width, out.data() + (row / S) * width);
    }
  }
}

void write_rows_file(const fs::path& path, const TableRowsSpec& table, int shard, int shards, std::uint64_t local_rows,
                     std::span<const float> rows,
                     const std::vector<std::pair<std::string, std::span<const float>>>& state) {
  H5::H5File file(path.string(), H5F_ACC_TRUNC);
  write_string_attribute(file, "table", table.name);
  write_attribute(file, "rows", H5::PredType::NATIVE_UINT64, table.rows);
  write_attribute(file, "width", H5::PredType::NATIVE_UINT64, static_cast<std::uint64_t>(table.width));
  write_attribute(file, "shard", H5::PredType::NATIVE_INT32, shard);
  write_attribute(file, "shards", H5::PredType::NATIVE_INT32, shards);
  write_rows(file, kRowsDataset, local_rows, table.width, rows);
  H5::Group group = file.createGroup(kStateGroup);
  for (const auto& [name, values] : state) {
    const std::size_t width = state_width(values.size(), local_rows, table.width);
    write_rows(group, name.c_str(), local_rows, width, values);
  }
}

}  // namespace

std::uint64_t rows_of_shard(std::uint64_t rows, int shard, int shards) {
  const auto s = static_cast<std::uint64_t>(shard);
  return rows > s ? (rows - s + static_cast<std::uint64_t>(shards) - 1) / static_cast<std::uint64_t>(shards) : 0;
}

std::string table_rows_file(const std::string& table, int shard, int shards) {
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d.h5", shard, shards);
  return cat("rows-", table, suffix);
}

void write_table_rows(const fs::path& folder, const TableRowsSpec& table, int shard, int shards,
                      std::span<const float> rows,
                      const std::vector<std::pair<std::string, std::span<const float>>>& state) {
  const std::uint64_t local_rows = rows_of_shard(table.rows, shard, shards);
  PSTRAIN_ASSERT(rows.size() == local_rows * table.width, rows.size(), " floats for ", local_rows, " rows");
  const fs::path path = folder / table_rows_file(table.name, shard, shards);
  H5::Exception::dontPrint();
  try {
    write_rows_file(path, table, shard, shards, local_rows, rows, state);
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kOutput, cat("cannot write ", path.string(), ": ", failure.getDetailMsg(), " (disk full?)"));
  }
}

bool is_table_rows_file(const std::string& name) {
  return std::regex_match(name, row_file_pattern());
}

std::vector<std::string> list_table_row_files(const fs::path& folder) {
  std::vector<std::string> names;
  if (!fs::is_directory(folder)) return names;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && is_table_rows_file(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool holds_table_rows(const fs::path& folder, const std::string& table) {
  for (const std::string& name : list_table_row_files(folder)) {
    std::smatch match;
    if (std::regex_match(name, match, row_file_pattern()) && match[1].str() == table) return true;
  }
  return false;
}

std::vector<std::string> table_row_states(const fs::path& folder, const TableRowsSpec& table) {
  const Source first = sources(folder, table).front();
  std::vector<std::string> names;
  H5::Exception::dontPrint();
  try {
    const H5::H5File file(first.file.string(), H5F_ACC_RDONLY);
    if (first.rows_dataset != kRowsDataset || !file.nameExists(kStateGroup)) return names;
    const H5::Group group = file.openGroup(kStateGroup);
    for (hsize_t i = 0; i < group.getNumObjs(); ++i) names.push_back(group.getObjnameByIdx(i));
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kInputData, cat("cannot read ", first.file.string(), ": ", failure.getDetailMsg()));
  }
  return names;
}

TableRows read_table_rows(const fs::path& folder, const TableRowsSpec& table, int shard, int shards,
                          const std::vector<std::string>& state) {
  TableRows result;
  const std::size_t size = rows_of_shard(table.rows, shard, shards) * table.width;
  result.rows.assign(size, 0.0f);
  result.state.assign(state.size(), std::vector<float>(size, 0.0f));
  std::vector<std::pair<std::string, std::span<float>>> targets;
  for (std::size_t i = 0; i < state.size(); ++i) targets.emplace_back(state[i], result.state[i]);
  read_table_rows(folder, table, shard, shards, result.rows, targets);
  return result;
}

void read_table_rows(const fs::path& folder, const TableRowsSpec& table, int shard, int shards, std::span<float> rows,
                     const std::vector<std::pair<std::string, std::span<float>>>& state) {
  const std::uint64_t local_rows = rows_of_shard(table.rows, shard, shards);
  PSTRAIN_ASSERT(rows.size() == local_rows * table.width, rows.size(), " floats for ", local_rows, " rows");
  if (local_rows == 0) return;  // nothing to read: this shard holds no row of the table
  H5::Exception::dontPrint();
  for (const Source& source : sources(folder, table)) {
    // Source shard k holds rows k, k + K, ...; shard s of S wants rows s, s + S, ...: both hold some row only
    // when gcd(K, S) divides s - k.
    if ((shard - source.shard) % std::gcd(source.shards, shards) != 0) continue;
    try {
      const H5::H5File file(source.file.string(), H5F_ACC_RDONLY);
      check_attributes(file, source, table);
      for (std::size_t i = 0; i <= state.size(); ++i) {
        const std::string name = i == 0 ? source.rows_dataset : source.state_dataset(state[i - 1].first);
        if (!file.nameExists(name.substr(0, name.find('/'))) || !file.nameExists(name)) {
          throw Error(ExitCode::kInputData, cat(source.file.string(), " has no '", name, "'"));
        }
        const std::span<float> out = i == 0 ? rows : state[i - 1].second;
        const std::size_t width = state_width(out.size(), local_rows, table.width);
        pick_rows(file.openDataSet(name), source.file, name, table, width, source, shard, shards, out);
      }
    } catch (const H5::Exception& failure) {
      throw Error(ExitCode::kInputData, cat("cannot read ", source.file.string(), ": ", failure.getDetailMsg()));
    }
  }
}

namespace {

// The pass folder's dataset of `table`, checked to be whole and of its shape; use(dataset) reads it.
void with_pass_table(const fs::path& pass_dir, const TableRowsSpec& table,
                     const std::function<void(const H5::DataSet&, const fs::path&)>& use) {
  verify_pass_folder(pass_dir);
  const fs::path path = pass_dir / kParametersFile;
  refuse_keyed_tables(path);
  H5::Exception::dontPrint();
  try {
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    if (!file.nameExists(table.name)) {
      throw Error(ExitCode::kInputData,
                  cat(path.string(), " has no parameter '", table.name, "' (saved from another model?)"));
    }
    const H5::DataSet dataset = file.openDataSet(table.name);
    const H5::DataSpace space = dataset.getSpace();
    hsize_t dims[2] = {0, 0};
    if (space.getSimpleExtentNdims() != 2 || (space.getSimpleExtentDims(dims), dims[0] != table.rows) ||
        dims[1] != table.width) {
      throw Error(ExitCode::kInputData, cat(path.string(), ": '", table.name, "' is not ", table.rows, " x ",
                                            table.width, " (saved from another model?)"));
    }
    hdf5::check_dataset_storage(dataset, path.string(), table.name,
                                table.rows * table.width * dataset.getDataType().getSize());
    use(dataset, path);
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kInputData, cat("cannot read ", path.string(), ": ", failure.getDetailMsg()));
  }
}

}  // namespace

void read_pass_table_rows(const fs::path& pass_dir, const TableRowsSpec& table, int shard, int shards,
                          std::span<float> rows) {
  PSTRAIN_ASSERT(rows.size() == rows_of_shard(table.rows, shard, shards) * table.width, rows.size(), " floats");
  with_pass_table(pass_dir, table, [&](const H5::DataSet& dataset, const fs::path& path) {
    pick_rows(dataset, path, table.name, table, table.width, {path, table.name, {}, 0, 1}, shard, shards, rows);
  });
}

void check_pass_table(const fs::path& pass_dir, const TableRowsSpec& table) {
  with_pass_table(pass_dir, table, [](const H5::DataSet&, const fs::path&) {});
}

}  // namespace pstrain::checkpoint
