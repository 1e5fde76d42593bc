// The layout of a data folder: train-00000.h5 ... train-(N-1).h5 and test.h5.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/error.h"
#include "data/ctr_file_names.h"
#include "data/shard.h"
#include "data/vocabulary.h"

namespace pstrain::data {

namespace {

namespace fs = std::filesystem;

// The index of a canonically named train shard ("train-00042.h5" -> 42). Other names, including the
// temporary files of an interrupted write ("train-00042.h5.tmp-123") and oddly padded ones, are not shards.
std::optional<std::size_t> train_index(const std::string& name) {
  constexpr std::string_view prefix = "train-", suffix = ".h5";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) {
    return std::nullopt;
  }
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const std::size_t index = std::stoul(digits);
  if (train_shard_file_name(index) != name) return std::nullopt;
  return index;
}

void require_folder(const fs::path& folder) {
  std::error_code ec;
  if (!fs::exists(folder, ec)) {
    throw Error(ExitCode::kInputData, cat("data folder ", folder.string(), " does not exist (run pstrain-data first)"));
  }
  if (!fs::is_directory(folder, ec)) {
    throw Error(ExitCode::kInputData, cat("data folder ", folder.string(), " is not a folder"));
  }
}

// (index, path) of every train shard in the folder, sorted by index.
std::vector<std::pair<std::size_t, fs::path>> find_train_shards(const fs::path& folder, ExitCode on_error) {
  std::vector<std::pair<std::size_t, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (const auto index = train_index(it->path().filename().string())) found.emplace_back(*index, it->path());
  }
  if (ec) throw Error(on_error, cat("cannot list data folder ", folder.string(), ": ", ec.message()));
  std::sort(found.begin(), found.end());
  return found;
}

// A folder that pstrain-data finished lists its train shards in its MANIFEST: the folder must hold exactly those.
// The gap check alone misses a copy that lost the highest shards.
void check_train_shards_against_manifest(const fs::path& folder, const std::vector<fs::path>& found) {
  std::error_code ec;
  if (!fs::exists(folder / kManifestName, ec)) return;
  std::vector<std::string> listed, present;
  for (const ManifestEntry& entry : read_manifest(folder, kDataManifest)) {
    if (train_index(entry.name)) listed.push_back(entry.name);
  }
  for (const fs::path& path : found) present.push_back(path.filename().string());
  std::sort(listed.begin(), listed.end());
  if (listed != present) {
    throw Error(ExitCode::kInputData,
                cat("data folder ", folder.string(), " holds ", present.size(), " train shards but its ", kManifestName,
                    " lists ", listed.size() == present.size() ? "others" : cat(listed.size()),
                    " (an incomplete copy, or shards of two conversions): convert the data again"));
  }
}

}  // namespace

std::string train_shard_file_name(std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "train-%05zu.h5", index);
  return name;
}

std::vector<fs::path> list_train_shards(const fs::path& folder) {
  std::vector<fs::path> paths = list_train_shards_as_found(folder);
  check_train_shards_against_manifest(folder, paths);
  return paths;
}

std::vector<fs::path> list_train_shards_as_found(const fs::path& folder) {
  require_folder(folder);
  const auto found = find_train_shards(folder, ExitCode::kInputData);
  if (found.empty()) {
    throw Error(ExitCode::kInputData,
                cat("data folder ", folder.string(), " holds no train-NNNNN.h5 shards (run pstrain-data first)"));
  }
  std::vector<fs::path> paths;
  for (std::size_t i = 0; i < found.size(); ++i) {
    // A gap means a partial copy or a mix of two conversions: training on it would silently skip data.
    if (found[i].first != i) {
      throw Error(ExitCode::kInputData, cat("data folder ", folder.string(), ": ", train_shard_file_name(i),
                                            " is missing (found ", found.size(), " train shards, the highest is ",
                                            found.back().second.filename().string(), "); convert the data again"));
    }
    paths.push_back(found[i].second);
  }
  return paths;
}

fs::path test_shard_path(const fs::path& folder) {
  require_folder(folder);
  const fs::path path = folder / kTestShardFileName;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw Error(ExitCode::kInputData,
                cat("data folder ", folder.string(), " has no ", kTestShardFileName, " (run pstrain-data first)"));
  }
  return path;
}

std::vector<fs::path> remove_train_shards_from(const fs::path& folder, std::size_t first_index) {
  std::vector<fs::path> removed;
  for (const auto& [index, path] : find_train_shards(folder, ExitCode::kOutput)) {
    if (index < first_index) continue;
    std::error_code ec;
    fs::remove(path, ec);
    if (ec) throw Error(ExitCode::kOutput, cat("cannot remove stale shard ", path.string(), ": ", ec.message()));
    removed.push_back(path);
  }
  return removed;
}

std::vector<std::string> conversion_files_in(const fs::path& folder) {
  std::error_code ec;
  if (!fs::exists(folder, ec)) return {};
  const auto written_by_a_conversion = [](const std::string& name) {
    const std::string base = name.substr(0, name.find(".tmp-"));  // a shard or vocab.txt being written
    return train_index(base) || base == kTestShardFileName || base == kValidShardFileName ||
           base == kVocabularyFileName || base == kCtrFieldsFileName || base == kCtrReportFileName ||
           base == kManifestName || name.starts_with(kConversionStagingPrefix);
  };
  std::vector<std::string> found;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (written_by_a_conversion(name)) found.push_back(name);
  }
  if (ec) throw Error(ExitCode::kOutput, cat("cannot list output folder ", folder.string(), ": ", ec.message()));
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace pstrain::data
