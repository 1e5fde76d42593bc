#include "simulation/job_profile.h"

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/error.h"
#include "core/files.h"

namespace pstrain::simulation {

std::vector<std::size_t> JobProfile::parameter_sizes() const {
  std::vector<std::size_t> sizes;
  for (const ProfiledParameter& parameter : parameters) sizes.push_back(parameter.size);
  return sizes;
}

std::vector<std::pair<std::size_t, std::size_t>> JobProfile::parameter_ranges(const std::string& layer) const {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::size_t offset = 0;
  for (const ProfiledParameter& parameter : parameters) {
    if (parameter.name.rfind(layer + ".", 0) == 0) ranges.emplace_back(offset, parameter.size);
    offset += parameter.size;
  }
  return ranges;
}

std::size_t JobProfile::parameter_count() const {
  std::size_t count = 0;
  for (const ProfiledParameter& parameter : parameters) count += parameter.size;
  return count;
}

double JobProfile::step_seconds() const {
  return std::accumulate(layers.begin(), layers.end(), 0.0, [](double sum, const ProfiledLayer& layer) {
    return sum + layer.forward_seconds + layer.backward_seconds;
  });
}

std::size_t JobProfile::parameter_offset(const std::string& name) const {
  std::size_t offset = 0;
  for (const ProfiledParameter& parameter : parameters) {
    if (parameter.name == name) return offset;
    offset += parameter.size;
  }
  throw Error(ExitCode::kInputData, cat("the profile's table ", name, " is none of its parameters"));
}

void write_profile(const JobProfile& profile, const std::filesystem::path& path) {
  std::ostringstream text;
  text.precision(9);
  text << "# pstrain dry-run profile (lib/simulation/job_profile.h)\n";
  text << "model " << profile.model << "\nbatch " << profile.batch << "\n";
  for (const ProfiledParameter& parameter : profile.parameters)
    text << "parameter " << parameter.name << ' ' << parameter.size << '\n';
  for (const ProfiledLayer& layer : profile.layers)
    text << "layer " << layer.name << ' ' << layer.forward_seconds << ' ' << layer.backward_seconds << '\n';
  text << "trainer_bytes " << profile.trainer_bytes << "\nbaseline_bytes " << profile.baseline_bytes << '\n';
  for (const ProfiledTable& table : profile.tables) {
    text << "table " << table.parameter << ' ' << table.rows << ' ' << table.width << ' ' << table.ids_per_sample
         << '\n';
  }
  for (const std::vector<std::uint64_t>& batch : profile.id_batches) {
    text << "ids";
    for (const std::uint64_t id : batch) text << ' ' << id;
    text << '\n';
  }
  write_file_atomically(path, text.str());
}

namespace {

// One record; false when the line is not one this format knows.
bool read_record(const std::string& key, std::istringstream& fields, JobProfile& profile) {
  if (key == "model") return static_cast<bool>(fields >> profile.model);
  if (key == "batch") return static_cast<bool>(fields >> profile.batch);
  if (key == "trainer_bytes") return static_cast<bool>(fields >> profile.trainer_bytes);
  if (key == "baseline_bytes") return static_cast<bool>(fields >> profile.baseline_bytes);
  if (key == "parameter") {
    ProfiledParameter parameter;
    if (!(fields >> parameter.name >> parameter.size)) return false;
    profile.parameters.push_back(parameter);
    return true;
  }
  if (key == "table") {
    ProfiledTable table;
    if (!(fields >> table.parameter >> table.rows >> table.width >> table.ids_per_sample)) return false;
    profile.tables.push_back(table);
    return table.rows > 0 && table.width > 0 && table.ids_per_sample > 0;
  }
  if (key == "ids") {
    std::vector<std::uint64_t>& batch = profile.id_batches.emplace_back();
    for (std::uint64_t id = 0; fields >> id;) batch.push_back(id);
    return fields.eof() && !batch.empty();
  }
  if (key == "layer") {
    ProfiledLayer layer;
    if (!(fields >> layer.name >> layer.forward_seconds >> layer.backward_seconds)) return false;
    if (layer.forward_seconds < 0 || layer.backward_seconds < 0) return false;
    profile.layers.push_back(layer);
    return true;
  }
  return false;
}

// A table names a parameter of rows x width floats and comes with id batches of the profile's batch, every id
// one of its rows; at most one table (a batch's features are its ids).
void check_tables(const JobProfile& profile, const std::filesystem::path& path) {
  if (profile.tables.empty()) {
    if (!profile.id_batches.empty()) throw Error(ExitCode::kInputData, cat(path.string(), ": 'ids' without a table"));
    return;
  }
  if (profile.tables.size() > 1) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": more than one table (the dry-run drives one)"));
  }
  const ProfiledTable& table = profile.tables[0];
  const std::size_t offset = profile.parameter_offset(table.parameter);
  std::size_t size = 0;
  for (const ProfiledParameter& parameter : profile.parameters) {
    if (parameter.name == table.parameter) size = parameter.size;
  }
  if (size != table.rows * table.width) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": table ", table.parameter, " is ", table.rows, " x ",
                                          table.width, " but its parameter (at ", offset, ") holds ", size, " floats"));
  }
  if (profile.id_batches.empty()) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": table ", table.parameter, " without 'ids' lines"));
  }
  for (const std::vector<std::uint64_t>& batch : profile.id_batches) {
    const bool ids_in_table =
        std::all_of(batch.begin(), batch.end(), [&](std::uint64_t id) { return id < table.rows; });
    if (batch.size() != profile.batch * table.ids_per_sample || !ids_in_table) {
      throw Error(ExitCode::kInputData,
                  cat(path.string(), ": an 'ids' line needs batch x ids per sample = ",
                      profile.batch * table.ids_per_sample, " ids below ", table.rows, ", found ", batch.size()));
    }
  }
}

}  // namespace

JobProfile read_profile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::kInputData, cat("cannot read the dry-run profile ", path.string()));
  JobProfile profile;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream fields(line);
    std::string key;
    if (!(fields >> key) || key[0] == '#') continue;
    if (!read_record(key, fields, profile)) {
      throw Error(ExitCode::kInputData, cat(path.string(), ":", number, ": expected 'model NAME', 'batch N', ",
                                            "'parameter NAME SIZE', 'layer NAME FORWARD_S BACKWARD_S', ",
                                            "'trainer_bytes N', 'baseline_bytes N', 'table NAME ROWS WIDTH IDS' or ",
                                            "'ids ID...', found '", line, "'"));
    }
  }
  if (profile.batch == 0 || profile.parameters.empty() || profile.layers.empty()) {
    throw Error(ExitCode::kInputData,
                cat(path.string(),
                    ": a profile needs a batch, at least one parameter and one layer (pstrain-calibrate "
                    "writes one)"));
  }
  check_tables(profile, path);
  return profile;
}

}  // namespace pstrain::simulation
