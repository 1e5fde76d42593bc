#pragma once
// A checkpoint exists only once its MANIFEST, written last, lists every file with its size and CRC-32. Readers
// trust nothing else: a missing manifest, a missing file, another size or another checksum rejects the checkpoint.
//
// MANIFEST format (text):
//   pstrain-checkpoint <format version>
//   <crc32 as 8 hex digits> <size in bytes> <file name>      (one line per file)
//   end
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace pstrain::checkpoint {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr const char* kManifestName = "MANIFEST";

// CRC-32 (zlib's) of a whole file; throws Error(kInputData) when it cannot be read.
std::uint32_t file_crc32(const std::filesystem::path& path);

// One file's line of the MANIFEST, as the rank that wrote the file computes it (fsynced first).
struct ManifestEntry {
  std::string name;
  std::uint32_t crc32 = 0;
  std::uintmax_t size = 0;
};
ManifestEntry manifest_entry(const std::filesystem::path& folder, const std::string& name);

// Fsyncs each listed file and computes its entry (`known` entries, computed by the ranks that wrote those files,
// are taken as they are), then writes MANIFEST atomically (temporary name, fsync, rename, fsync folder).
void write_manifest(const std::filesystem::path& folder, const std::vector<std::string>& files,
                    const std::vector<ManifestEntry>& known = {});

// Throws Error(kInputData) naming the folder and the first problem found (format version included). Every
// listed file must exist with its size; checksums are compared for every file, or with `checksum` for the files
// it accepts (ranks reading a checkpoint that rank 0 has verified whole check what they read themselves).
void verify_manifest(const std::filesystem::path& folder, const std::function<bool(const std::string&)>& checksum = {});

}  // namespace pstrain::checkpoint
