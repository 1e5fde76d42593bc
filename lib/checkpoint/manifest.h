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
#include <string>
#include <vector>

namespace pstrain::checkpoint {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr const char* kManifestName = "MANIFEST";

// CRC-32 (zlib's) of a whole file; throws Error(kInputData) when it cannot be read.
std::uint32_t file_crc32(const std::filesystem::path& path);

// Fsyncs each listed file, then writes MANIFEST atomically (temporary name, fsync, rename, fsync folder).
void write_manifest(const std::filesystem::path& folder, const std::vector<std::string>& files);

// Throws Error(kInputData) naming the folder and the first problem found (format version included).
void verify_manifest(const std::filesystem::path& folder);

}  // namespace pstrain::checkpoint
