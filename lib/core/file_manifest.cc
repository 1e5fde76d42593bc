#include "core/file_manifest.h"

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/files.h"

namespace pstrain {

namespace fs = std::filesystem;

namespace {

std::string hex_crc(std::uint32_t crc) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", crc);
  return text;
}

}  // namespace

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

void write_manifest(const fs::path& folder, const ManifestKind& kind, const std::vector<ManifestEntry>& entries) {
  std::ostringstream text;
  text << kind.tag << ' ' << kind.version << "\n";
  for (const ManifestEntry& entry : entries)
    text << hex_crc(entry.crc32) << ' ' << entry.size << ' ' << entry.name << "\n";
  text << "end\n";
  write_file_atomically(folder / kManifestName, text.str());
}

std::vector<ManifestEntry> read_manifest(const fs::path& folder, const ManifestKind& kind) {
  const fs::path manifest = folder / kManifestName;
  std::ifstream in(manifest);
  if (!in) throw Error(ExitCode::kInputData, cat(folder.string(), " is incomplete: no ", kManifestName));
  std::string tag;
  std::uint32_t version = 0;
  if (!(in >> tag >> version) || tag != kind.tag) {
    throw Error(ExitCode::kInputData, cat(manifest.string(), " is not a pstrain ", kind.folder_noun, " manifest"));
  }
  if (version != kind.version) {
    throw Error(ExitCode::kInputData, cat(folder.string(), " has ", kind.folder_noun, " format version ", version,
                                          "; this pstrain reads version ", kind.version));
  }
  std::vector<ManifestEntry> entries;
  std::string crc_text;
  while (in >> crc_text) {
    if (crc_text == "end") {
      if (entries.empty()) break;
      return entries;
    }
    ManifestEntry entry;
    char* end = nullptr;
    const unsigned long crc = std::strtoul(crc_text.c_str(), &end, 16);
    if (crc_text.size() != 8 || *end != '\0' || !(in >> entry.size >> entry.name) ||
        entry.name.find('/') != std::string::npos) {
      throw Error(ExitCode::kInputData, cat(manifest.string(), " is damaged"));
    }
    entry.crc32 = static_cast<std::uint32_t>(crc);
    entries.push_back(std::move(entry));
  }
  throw Error(ExitCode::kInputData, cat(manifest.string(), " is truncated"));
}

void check_listed_file(const fs::path& folder, const ManifestEntry& entry, bool checksum) {
  const fs::path path = folder / entry.name;
  std::error_code error;
  const auto actual_size = fs::file_size(path, error);
  if (error) {
    throw Error(ExitCode::kInputData, cat(folder.string(), ": ", entry.name, " listed in the manifest is missing"));
  }
  if (actual_size != entry.size) {
    throw Error(ExitCode::kInputData, cat(path.string(), " has ", actual_size, " bytes, the manifest says ", entry.size,
                                          " (truncated or replaced)"));
  }
  if (!checksum) return;
  if (const std::uint32_t actual = file_crc32(path); actual != entry.crc32) {
    throw Error(ExitCode::kInputData,
                cat(path.string(), ": checksum ", hex_crc(actual), " does not match the manifest's ",
                    hex_crc(entry.crc32), " (the file is corrupt)"));
  }
}

}  // namespace pstrain
