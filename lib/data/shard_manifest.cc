// The data folder's MANIFEST: what pstrain-data wrote, checked before a shard reaches HDF5.
#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <tuple>

#include "core/error.h"
#include "data/ctr_file_names.h"
#include "data/shard.h"
#include "data/vocabulary.h"

namespace pstrain::data {

namespace fs = std::filesystem;

namespace {

bool has_manifest(const fs::path& folder) {
  std::error_code ec;
  return fs::exists(folder / kManifestName, ec);
}

// The listed entry of folder/name, or nothing when the folder has no MANIFEST; throws when it has one that does
// not list the file.
std::optional<ManifestEntry> listed_entry(const fs::path& path) {
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!has_manifest(folder)) return std::nullopt;
  const std::vector<ManifestEntry> entries = read_manifest(folder, kDataManifest);
  const std::string name = path.filename().string();
  const auto entry =
      std::find_if(entries.begin(), entries.end(), [&](const ManifestEntry& e) { return e.name == name; });
  if (entry == entries.end()) {
    throw Error(ExitCode::kInputData, cat(path.string(), " is not listed in ", (folder / kManifestName).string(),
                                          " (a file from another conversion?): convert the data again"));
  }
  return *entry;
}

// Shards already checked by this process, by path, size and modification time: a trainer reads each shard's
// attributes at start and its samples later, and the checksum need not be computed twice.
class CheckedFiles {
 public:
  using Key = std::tuple<std::string, std::uintmax_t, fs::file_time_type>;
  static std::optional<Key> key_of(const fs::path& path) {
    std::error_code size_error, time_error;
    const auto size = fs::file_size(path, size_error);
    const auto time = fs::last_write_time(path, time_error);
    if (size_error || time_error) return std::nullopt;
    return Key{fs::absolute(path).string(), size, time};
  }
  bool contains(const Key& key) {
    const std::lock_guard lock(mutex_);
    return checked_.count(key) > 0;
  }
  void insert(const Key& key) {
    const std::lock_guard lock(mutex_);
    checked_.insert(key);
  }

 private:
  std::mutex mutex_;
  std::set<Key> checked_;
};

CheckedFiles& checked_files() {
  static CheckedFiles files;
  return files;
}

}  // namespace

void write_data_manifest(const fs::path& folder) {
  std::vector<std::string> names;
  for (const fs::path& shard : list_train_shards_as_found(folder)) names.push_back(shard.filename().string());
  names.push_back(kTestShardFileName);
  for (const char* optional : {kValidShardFileName, kVocabularyFileName, kCtrFieldsFileName, kCtrReportFileName}) {
    std::error_code ec;
    if (fs::is_regular_file(folder / optional, ec)) names.push_back(optional);
  }
  std::vector<ManifestEntry> entries;
  for (const std::string& name : names) entries.push_back(manifest_entry(folder, name));
  write_manifest(folder, kDataManifest, entries);
}

bool check_shard_against_manifest(const fs::path& path) {
  const auto key = CheckedFiles::key_of(path);
  if (key && checked_files().contains(*key)) return true;
  const std::optional<ManifestEntry> entry = listed_entry(path);
  if (!entry) return false;
  check_listed_file(path.parent_path().empty() ? fs::path(".") : path.parent_path(), *entry, true);
  if (key) checked_files().insert(*key);
  return true;
}

std::uint32_t shard_crc32(const fs::path& path) {
  const std::optional<ManifestEntry> entry = listed_entry(path);
  return entry ? entry->crc32 : file_crc32(path);
}

}  // namespace pstrain::data
