#include "checkpoint/manifest.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/files.h"

namespace pstrain::checkpoint {

namespace fs = std::filesystem;

std::uint32_t file_crc32(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::kInputData, cat("cannot read ", path.string()));
  uLong crc = crc32(0L, Z_NULL, 0);
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = in.gcount();
    if (got > 0) crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(got));
  }
  return static_cast<std::uint32_t>(crc);
}

ManifestEntry manifest_entry(const fs::path& folder, const std::string& name) {
  const fs::path path = folder / name;
  fsync_path(path);
  return {name, file_crc32(path), fs::file_size(path)};
}

void write_manifest(const fs::path& folder, const std::vector<std::string>& files,
                    const std::vector<ManifestEntry>& known) {
  std::ostringstream text;
  text << "pstrain-checkpoint " << kFormatVersion << "\n";
  for (const std::string& name : files) {
    const auto given =
        std::find_if(known.begin(), known.end(), [&](const ManifestEntry& entry) { return entry.name == name; });
    const ManifestEntry entry = given != known.end() ? *given : manifest_entry(folder, name);
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", entry.crc32);
    text << crc << ' ' << entry.size << ' ' << name << "\n";
  }
  text << "end\n";
  write_file_atomically(folder / kManifestName, text.str());
}

void verify_manifest(const fs::path& folder, const std::function<bool(const std::string&)>& checksum) {
  const fs::path manifest = folder / kManifestName;
  std::ifstream in(manifest);
  if (!in) throw Error(ExitCode::kInputData, cat(folder.string(), " is incomplete: no ", kManifestName));
  std::string magic;
  std::uint32_t version = 0;
  if (!(in >> magic >> version) || magic != "pstrain-checkpoint") {
    throw Error(ExitCode::kInputData, cat(manifest.string(), " is not a pstrain checkpoint manifest"));
  }
  if (version != kFormatVersion) {
    throw Error(ExitCode::kInputData, cat(folder.string(), " has checkpoint format version ", version,
                                          "; this pstrain reads version ", kFormatVersion));
  }
  std::string crc_text;
  bool ended = false;
  int files = 0;
  while (in >> crc_text) {
    if (crc_text == "end") {
      ended = true;
      break;
    }
    std::uintmax_t size = 0;
    std::string name;
    if (!(in >> size >> name) || name.find('/') != std::string::npos) {
      throw Error(ExitCode::kInputData, cat(manifest.string(), " is damaged"));
    }
    const fs::path path = folder / name;
    std::error_code error;
    const auto actual_size = fs::file_size(path, error);
    if (error)
      throw Error(ExitCode::kInputData, cat(folder.string(), ": ", name, " listed in the manifest is missing"));
    if (actual_size != size) {
      throw Error(ExitCode::kInputData, cat(path.string(), " has ", actual_size, " bytes, the manifest says ", size,
                                            " (truncated or replaced)"));
    }
    if (checksum && !checksum(name)) {
      ++files;
      continue;
    }
    char actual_crc[16];
    std::snprintf(actual_crc, sizeof actual_crc, "%08x", file_crc32(path));
    if (crc_text != actual_crc) {
      throw Error(ExitCode::kInputData, cat(path.string(), ": checksum ", actual_crc, " does not match the manifest's ",
                                            crc_text, " (the file is corrupt)"));
    }
    ++files;
  }
  if (!ended || files == 0) throw Error(ExitCode::kInputData, cat(manifest.string(), " is truncated"));
}

}  // namespace pstrain::checkpoint
