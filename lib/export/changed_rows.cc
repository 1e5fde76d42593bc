#include "export/changed_rows.h"

#include <H5Cpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "checkpoint/pass_folder.h"
#include "checkpoint/pass_model.h"
#include "core/error.h"
#include "core/files.h"
#include "hdf5/attributes.h"
#include "inference/saved_model.h"

namespace pstrain::exporting {

namespace fs = std::filesystem;

namespace {

std::span<const float> row_of(const KeyedTableRows& table, std::size_t k, std::size_t width) {
  return table.rows.subspan((k + 1) * width, width);  // row 0 is the default row
}

void add_changed(TableDelta& delta, std::int64_t id, std::span<const float> row) {
  delta.changed_ids.push_back(id);
  delta.changed_rows.insert(delta.changed_rows.end(), row.begin(), row.end());
}

std::string text_of(const fs::path& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void check_same_model(const fs::path& since, const fs::path& pass) {
  const fs::path a = since / checkpoint::kModelTextFile;
  const fs::path b = pass / checkpoint::kModelTextFile;
  if (fs::exists(a) && fs::exists(b) && text_of(a) == text_of(b)) return;
  throw Error(ExitCode::kInputData,
              cat("--since ", since.string(), " and ", pass.string(), " are not pass folders of one model (their ",
                  checkpoint::kModelTextFile, " differ or are missing): give an earlier pass folder of the same run"));
}

void write_ids(H5::Group& group, const char* name, const std::vector<std::int64_t>& ids) {
  const hsize_t dims[1] = {ids.size()};
  H5::DataSet dataset = group.createDataSet(name, H5::PredType::NATIVE_INT64, H5::DataSpace(1, dims));
  if (!ids.empty()) dataset.write(ids.data(), H5::PredType::NATIVE_INT64);
}

void write_floats(H5::Group& group, const char* name, const std::vector<hsize_t>& dims,
                  const std::vector<float>& values) {
  H5::DataSet dataset =
      group.createDataSet(name, H5::PredType::NATIVE_FLOAT, H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
  if (!values.empty()) dataset.write(values.data(), H5::PredType::NATIVE_FLOAT);
}

void write_file(const fs::path& path, const std::vector<TableDelta>& deltas, const fs::path& since,
                const fs::path& pass) {
  H5::H5File file(path.string(), H5F_ACC_TRUNC);
  hdf5::write_string_attribute(file, "format", kChangedRowsFormat);
  hdf5::write_attribute(file, "version", H5::PredType::NATIVE_INT32, kChangedRowsVersion);
  hdf5::write_string_attribute(file, "since", since.string());
  hdf5::write_string_attribute(file, "pass", pass.string());
  H5::Group tables = file.createGroup("tables");
  for (const TableDelta& delta : deltas) {
    H5::Group group = tables.createGroup(delta.name);
    write_ids(group, "changed_ids", delta.changed_ids);
    write_floats(group, "changed_rows", {delta.changed_ids.size(), delta.width}, delta.changed_rows);
    write_ids(group, "removed_ids", delta.removed_ids);
    write_floats(group, "default_row", {delta.width}, delta.default_row);
  }
}

}  // namespace

TableDelta table_delta(const std::string& name, std::size_t width, const KeyedTableRows& before,
                       const KeyedTableRows& after) {
  PSTRAIN_ASSERT(before.rows.size() == (before.keys.size() + 1) * width &&
                     after.rows.size() == (after.keys.size() + 1) * width,
                 "table ", name, ": ", before.rows.size(), " and ", after.rows.size(), " floats for ",
                 before.keys.size(), " and ", after.keys.size(), " keys of width ", width);
  TableDelta delta{name, width, {}, {}, {}, std::vector<float>(after.rows.begin(), after.rows.begin() + width)};
  std::size_t i = 0;  // in before.keys
  std::size_t j = 0;  // in after.keys
  while (i < before.keys.size() || j < after.keys.size()) {
    if (j == after.keys.size() || (i < before.keys.size() && before.keys[i] < after.keys[j])) {
      delta.removed_ids.push_back(before.keys[i++]);
    } else if (i == before.keys.size() || after.keys[j] < before.keys[i]) {
      add_changed(delta, after.keys[j], row_of(after, j, width));
      ++j;
    } else {  // held in both: changed when any bit differs
      const std::span<const float> old_row = row_of(before, i++, width);
      const std::span<const float> new_row = row_of(after, j, width);
      if (std::memcmp(old_row.data(), new_row.data(), new_row.size_bytes()) != 0)
        add_changed(delta, after.keys[j], new_row);
      ++j;
    }
  }
  return delta;
}

std::vector<TableDelta> changed_rows(const fs::path& since, const fs::path& pass) {
  inference::check_pass_folder(since);
  inference::check_pass_folder(pass);
  check_same_model(since, pass);
  const auto old_keys = checkpoint::read_pass_keys(since);
  const auto new_keys = checkpoint::read_pass_keys(pass);
  if (new_keys.empty()) {
    throw Error(ExitCode::kUsage, cat(pass.string(), " holds no table keyed by the raw id (--table-keys exact): ",
                                      "there are no changed rows to export; export it whole with --onnx"));
  }
  std::vector<TableDelta> deltas;
  for (const auto& [name, keys] : new_keys) {
    const auto old = old_keys.find(name);
    if (old == old_keys.end()) {
      throw Error(ExitCode::kInputData, cat("--since ", since.string(), " holds no keyed table ", name, " (",
                                            pass.string(), " does): not a pass folder of the same run"));
    }
    const checkpoint::PassTable before = checkpoint::read_pass_table(since, name);
    const checkpoint::PassTable after = checkpoint::read_pass_table(pass, name);
    if (before.width != after.width || before.rows != old->second.size() + 1 || after.rows != keys.size() + 1) {
      throw Error(ExitCode::kInputData,
                  cat("table ", name, " is ", before.rows, " x ", before.width, " for ", old->second.size(),
                      " keys in ", since.string(), " and ", after.rows, " x ", after.width, " for ", keys.size(),
                      " keys in ", pass.string(), " (a keyed table holds a default row and a row per key)"));
    }
    deltas.push_back(table_delta(name, after.width, {old->second, before.values}, {keys, after.values}));
  }
  return deltas;
}

void write_changed_rows(const fs::path& target, const std::vector<TableDelta>& deltas, const fs::path& since,
                        const fs::path& pass) {
  std::error_code error;
  if (fs::exists(fs::symlink_status(target, error))) {
    throw Error(ExitCode::kOutput,
                cat("--changed-rows ", target.string(), " already exists; pstrain never replaces a file"));
  }
  const fs::path temporary = target.string() + ".tmp-" + std::to_string(::getpid());
  try {
    H5::Exception::dontPrint();
    write_file(temporary, deltas, since, pass);
  } catch (const H5::Exception& failure) {
    fs::remove(temporary, error);
    throw Error(ExitCode::kOutput, cat("cannot write ", target.string(), ": ", failure.getDetailMsg()));
  }
  fsync_path(temporary);
  fs::rename(temporary, target, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw Error(ExitCode::kOutput,
                cat("cannot rename ", temporary.string(), " to ", target.string(), ": ", error.message()));
  }
  fsync_path(target.parent_path().empty() ? "." : target.parent_path());
}

}  // namespace pstrain::exporting
