#pragma once
// A checkpoint exists only once its MANIFEST (core/file_manifest.h), written last, lists every file with its
// size and CRC-32. Readers trust nothing else: a missing manifest, a missing file, another size or another
// checksum rejects the checkpoint.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/file_manifest.h"

namespace pstrain::checkpoint {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr ManifestKind kCheckpointManifest{"pstrain-checkpoint", kFormatVersion, "checkpoint"};
using pstrain::kManifestName;
using pstrain::manifest_entry;
using pstrain::ManifestEntry;

// Fsyncs each listed file and computes its entry (`known` entries, computed by the ranks that wrote those files,
// are taken as they are), then writes MANIFEST atomically.
void write_manifest(const std::filesystem::path& folder, const std::vector<std::string>& files,
                    const std::vector<ManifestEntry>& known = {});

// Throws Error(kInputData) naming the folder and the first problem found (format version included). Every
// listed file must exist with its size; checksums are compared for every file, or with `checksum` for the files
// it accepts (ranks reading a checkpoint that rank 0 has verified whole check what they read themselves).
void verify_manifest(const std::filesystem::path& folder, const std::function<bool(const std::string&)>& checksum = {});

}  // namespace pstrain::checkpoint
