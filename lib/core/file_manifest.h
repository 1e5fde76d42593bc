#pragma once
// A folder's MANIFEST: the files that make the folder whole, each with its size and CRC-32, written last and
// atomically. Checkpoints (checkpoint/manifest.h) and data folders (data/shard.h) carry one, and their readers
// trust a listed file only once its size and checksum match: a truncated copy, a flipped bit or a file from
// another conversion is refused before any parser (HDF5's above all) reads it.
//
// Format (text):
//   <kind> <format version>                                  e.g. "pstrain-checkpoint 1", "pstrain-data 1"
//   <crc32 as 8 hex digits> <size in bytes> <file name>      (one line per file)
//   end
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace pstrain {

inline constexpr const char* kManifestName = "MANIFEST";

// Which folders a manifest describes: its first word, the format version this pstrain writes and reads, and
// what to call the folder in messages ("checkpoint", "data folder").
struct ManifestKind {
  std::string_view tag;
  std::uint32_t version = 0;
  std::string_view folder_noun;
};

struct ManifestEntry {
  std::string name;
  std::uint32_t crc32 = 0;
  std::uintmax_t size = 0;
};

// CRC-32 (zlib's) of a whole file; throws Error(kInputData) when it cannot be read.
std::uint32_t file_crc32(const std::filesystem::path& path);

// The entry of folder/name as written: the file is fsynced first, so that the checksum describes what is on disk.
ManifestEntry manifest_entry(const std::filesystem::path& folder, const std::string& name);

// Writes folder/MANIFEST atomically (temporary name, fsync, rename, fsync folder).
void write_manifest(const std::filesystem::path& folder, const ManifestKind& kind,
                    const std::vector<ManifestEntry>& entries);

// The entries of folder/MANIFEST. Throws Error(kInputData) naming the problem: no manifest ("<folder> is
// incomplete"), another kind, another format version, a damaged or truncated list.
std::vector<ManifestEntry> read_manifest(const std::filesystem::path& folder, const ManifestKind& kind);

// Throws Error(kInputData) naming the file when it is missing or has another size, or, with `checksum`, another
// CRC-32.
void check_listed_file(const std::filesystem::path& folder, const ManifestEntry& entry, bool checksum);

}  // namespace pstrain
