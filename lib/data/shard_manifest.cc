// The data folder's MANIFEST: what pstrain-data wrote, checked before a shard reaches HDF5.
#include <algorithm>
#include <system_error>

#include "core/error.h"
#include "data/shard.h"
#include "data/vocabulary.h"

namespace pstrain::data {

namespace fs = std::filesystem;

namespace {

bool has_manifest(const fs::path& folder) {
  std::error_code ec;
  return fs::exists(folder / kManifestName, ec);
}

}  // namespace

void write_data_manifest(const fs::path& folder) {
  std::vector<std::string> names;
  for (const fs::path& shard : list_train_shards(folder)) names.push_back(shard.filename().string());
  names.push_back(kTestShardFileName);
  for (const char* optional : {kValidShardFileName, kVocabularyFileName}) {
    std::error_code ec;
    if (fs::is_regular_file(folder / optional, ec)) names.push_back(optional);
  }
  std::vector<ManifestEntry> entries;
  for (const std::string& name : names) entries.push_back(manifest_entry(folder, name));
  write_manifest(folder, kDataManifest, entries);
}

void check_shard_against_manifest(const fs::path& path) {
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!has_manifest(folder)) return;
  const std::vector<ManifestEntry> entries = read_manifest(folder, kDataManifest);
  const std::string name = path.filename().string();
  const auto entry =
      std::find_if(entries.begin(), entries.end(), [&](const ManifestEntry& e) { return e.name == name; });
  if (entry == entries.end()) {
    throw Error(ExitCode::kInputData, cat(path.string(), " is not listed in ", (folder / kManifestName).string(),
                                          " (a file from another conversion?): convert the data again"));
  }
  check_listed_file(folder, *entry, true);
}

}  // namespace pstrain::data
