#include "checkpoint/manifest.h"

#include <algorithm>

namespace pstrain::checkpoint {

namespace fs = std::filesystem;

void write_manifest(const fs::path& folder, const std::vector<std::string>& files,
                    const std::vector<ManifestEntry>& known) {
  std::vector<ManifestEntry> entries;
  for (const std::string& name : files) {
    const auto given =
        std::find_if(known.begin(), known.end(), [&](const ManifestEntry& entry) { return entry.name == name; });
    entries.push_back(given != known.end() ? *given : manifest_entry(folder, name));
  }
  pstrain::write_manifest(folder, kCheckpointManifest, entries);
}

void verify_manifest(const fs::path& folder, const std::function<bool(const std::string&)>& checksum) {
  for (const ManifestEntry& entry : read_manifest(folder, kCheckpointManifest)) {
    check_listed_file(folder, entry, !checksum || checksum(entry.name));
  }
}

}  // namespace pstrain::checkpoint
