#include "checkpoint/keyed_table_rows.h"

#include <H5Cpp.h>

#include "core/error.h"
#include "hdf5/attributes.h"

namespace pstrain::checkpoint {

namespace fs = std::filesystem;
using hdf5::read_attribute;
using hdf5::read_string_attribute;
using hdf5::write_attribute;
using hdf5::write_string_attribute;

namespace {

template <typename T>
void write_vector(H5::Group& group, const char* name, const H5::PredType& type, const std::vector<T>& values,
                  std::size_t width = 1) {
  const hsize_t dims[2] = {values.size() / std::max<std::size_t>(width, 1), width};
  H5::DataSet dataset = group.createDataSet(name, type, H5::DataSpace(width == 1 ? 1 : 2, dims));
  if (!values.empty()) dataset.write(values.data(), type);
}

template <typename T>
std::vector<T> read_vector(const H5::Group& group, const fs::path& file, const std::string& name,
                           const H5::PredType& type) {
  if (!group.nameExists(name)) throw Error(ExitCode::kInputData, cat(file.string(), " lacks /", name));
  const H5::DataSet dataset = group.openDataSet(name);
  const H5::DataSpace space = dataset.getSpace();
  std::vector<T> values(static_cast<std::size_t>(space.getSimpleExtentNpoints()));
  if (!values.empty()) dataset.read(values.data(), type);
  return values;
}

// The entries `keep` accepts, in place: their ids, recency, counts and every row-wise vector (`width` values each).
void keep_entries(KeyedRowsState& state, std::size_t width, const std::function<bool(std::int64_t)>& keep) {
  const std::size_t n = state.ids.size();
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < n; ++k) {
    if (keep(state.ids[k])) kept.push_back(k);
  }
  const auto select = [&kept](auto& values, std::size_t per) {
    for (std::size_t j = 0; j < kept.size(); ++j) {
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(kept[j] * per), per,
                  values.begin() + static_cast<std::ptrdiff_t>(j * per));
    }
    values.resize(kept.size() * per);
  };
  select(state.ids, 1);
  select(state.last_seen, 1);
  select(state.counts, 1);
  select(state.held_rows, 1);
  select(state.rows, width);
  for (auto& entry : state.state) select(entry.second, n == 0 ? width : entry.second.size() / n);
}

}  // namespace

void write_keyed_table_rows(const fs::path& folder, const TableRowsSpec& table, int shard, int shards,
                            const KeyedRowsState& state) {
  const fs::path path = folder / table_rows_file(table.name, shard, shards);
  H5::Exception::dontPrint();
  try {
    H5::H5File file(path.string(), H5F_ACC_TRUNC);
    write_string_attribute(file, "table", table.name);
    write_attribute(file, "rows", H5::PredType::NATIVE_UINT64, table.rows);
    write_attribute(file, "width", H5::PredType::NATIVE_UINT64, static_cast<std::uint64_t>(table.width));
    write_attribute(file, "shard", H5::PredType::NATIVE_INT32, shard);
    write_attribute(file, "shards", H5::PredType::NATIVE_INT32, shards);
    write_attribute(file, "keyed", H5::PredType::NATIVE_INT32, 1);
    write_attribute(file, "admitted", H5::PredType::NATIVE_UINT64, state.admitted);
    write_attribute(file, "evicted", H5::PredType::NATIVE_UINT64, state.evicted);
    write_attribute(file, "refused", H5::PredType::NATIVE_UINT64, state.refused);
    write_attribute(file, "sketch_sightings", H5::PredType::NATIVE_UINT64, state.sketch_sightings);
    write_vector(file, "ids", H5::PredType::NATIVE_INT64, state.ids);
    write_vector(file, "last_seen", H5::PredType::NATIVE_INT64, state.last_seen);
    write_vector(file, "count", H5::PredType::NATIVE_UINT64, state.counts);
    write_vector(file, "rows", H5::PredType::NATIVE_FLOAT, state.rows, table.width);
    H5::Group group = file.createGroup("optimizer");
    for (const auto& [name, values] : state.state) {
      const std::size_t per = state.ids.empty() ? table.width : values.size() / state.ids.size();
      write_vector(group, name.c_str(), H5::PredType::NATIVE_FLOAT, values, per);
    }
    write_vector(file, "sketch", H5::PredType::NATIVE_UINT16, state.sketch);
    write_vector(file, "row", H5::PredType::NATIVE_INT64, state.held_rows);
    write_vector(file, "index", H5::PredType::NATIVE_INT64, state.index, 2);
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kOutput, cat("cannot write ", path.string(), ": ", failure.getDetailMsg(), " (disk full?)"));
  }
}

int keyed_table_shards(const fs::path& folder, const TableRowsSpec& table) {
  for (const std::string& name : list_table_row_files(folder)) {
    const std::string prefix = cat("rows-", table.name, "-");
    if (name.rfind(prefix, 0) != 0 || name.size() != prefix.size() + 17) continue;  // NNNNN-of-NNNNN.h5
    const int shards = std::stoi(name.substr(prefix.size() + 9, 5));
    H5::Exception::dontPrint();
    try {
      const H5::H5File file((folder / name).string(), H5F_ACC_RDONLY);
      if (!file.attrExists("keyed")) {
        throw Error(ExitCode::kInputData,
                    cat(folder.string(), " holds table ", table.name,
                        " hashed into rows; this run keys it by the raw id (--table-keys exact)"));
      }
    } catch (const H5::Exception& failure) {
      throw Error(ExitCode::kInputData, cat("cannot read ", (folder / name).string(), ": ", failure.getDetailMsg()));
    }
    return shards;
  }
  throw Error(ExitCode::kInputData, cat(folder.string(), " holds no row files of table ", table.name));
}

KeyedRowsState read_keyed_table_rows(const fs::path& folder, const TableRowsSpec& table, int shard, int shards,
                                     const std::vector<std::string>& state,
                                     const std::function<bool(std::int64_t)>& keep) {
  const fs::path path = folder / table_rows_file(table.name, shard, shards);
  if (!fs::exists(path)) throw Error(ExitCode::kInputData, cat(path.string(), " is missing"));
  H5::Exception::dontPrint();
  try {
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    const std::string written = read_string_attribute(file, path, "table");
    const auto cap = read_attribute<std::uint64_t>(file, path, "rows", H5::PredType::NATIVE_UINT64);
    const auto width = read_attribute<std::uint64_t>(file, path, "width", H5::PredType::NATIVE_UINT64);
    if (written != table.name || width != table.width || !file.attrExists("keyed")) {
      throw Error(ExitCode::kInputData, cat(path.string(), " holds table ", written, " of width ", width,
                                            file.attrExists("keyed") ? "" : ", hashed", "; this model's ", table.name,
                                            " is keyed, of width ", table.width, " (saved from another model?)"));
    }
    (void)cap;  // the cap may change between runs: the reader deals what it keeps into its own
    KeyedRowsState result;
    result.admitted = read_attribute<std::uint64_t>(file, path, "admitted", H5::PredType::NATIVE_UINT64);
    result.evicted = read_attribute<std::uint64_t>(file, path, "evicted", H5::PredType::NATIVE_UINT64);
    result.refused = read_attribute<std::uint64_t>(file, path, "refused", H5::PredType::NATIVE_UINT64);
    result.sketch_sightings =
        read_attribute<std::uint64_t>(file, path, "sketch_sightings", H5::PredType::NATIVE_UINT64);
    result.ids = read_vector<std::int64_t>(file, path, "ids", H5::PredType::NATIVE_INT64);
    result.last_seen = read_vector<std::int64_t>(file, path, "last_seen", H5::PredType::NATIVE_INT64);
    result.counts = read_vector<std::uint64_t>(file, path, "count", H5::PredType::NATIVE_UINT64);
    result.rows = read_vector<float>(file, path, "rows", H5::PredType::NATIVE_FLOAT);
    const H5::Group group = file.openGroup("optimizer");
    for (const std::string& name : state) {
      result.state.emplace_back(name, read_vector<float>(group, path, name, H5::PredType::NATIVE_FLOAT));
    }
    result.sketch = read_vector<std::uint16_t>(file, path, "sketch", H5::PredType::NATIVE_UINT16);
    result.held_rows = read_vector<std::int64_t>(file, path, "row", H5::PredType::NATIVE_INT64);
    result.index = read_vector<std::int64_t>(file, path, "index", H5::PredType::NATIVE_INT64);
    const std::size_t n = result.ids.size();
    if (result.last_seen.size() != n || result.counts.size() != n || result.held_rows.size() != n ||
        result.rows.size() != n * table.width) {
      throw Error(ExitCode::kInputData,
                  cat(path.string(), ": its ids, last_seen, count, row and rows disagree in length"));
    }
    keep_entries(result, table.width, keep);
    return result;
  } catch (const H5::Exception& failure) {
    throw Error(ExitCode::kInputData, cat("cannot read ", path.string(), ": ", failure.getDetailMsg()));
  }
}

}  // namespace pstrain::checkpoint
