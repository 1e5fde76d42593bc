// The checkpoint loader (--resume): MANIFEST, model.h5 and training.h5 of one checkpoint folder. The input holds
// the three files separated by fuzz::kFileSeparator, after one control byte: when its lowest bit is set the
// MANIFEST is rewritten with the real sizes and checksums of the fuzzed HDF5 files, so that mutations of those
// reach the HDF5 reading instead of stopping at the checksum; otherwise the fuzzed MANIFEST text is used as is.
#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "checkpoint/manifest.h"
#include "checkpoint_model.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  if (size < 1) return 0;
  const bool real_manifest = data[0] & 1;
  const auto parts = fuzz::split_files({reinterpret_cast<const char*>(data) + 1, size - 1}, 3);
  const auto folder = fuzz::scratch() / "ckpt-0000000001";
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  std::filesystem::create_directories(folder);
  fuzz::write_file(folder / "model.h5", parts[1]);
  fuzz::write_file(folder / "training.h5", parts[2]);
  fuzz::write_file(folder / "config.ini", "passes = 1\n");
  if (real_manifest) {
    checkpoint::write_manifest(folder, {"model.h5", "training.h5", "config.ini"});
  } else {
    fuzz::write_file(folder / checkpoint::kManifestName, parts[0]);
  }
  fuzz::expect_clean([&] {
    checkpoint::read_checkpoint(folder, fuzz::fuzz_model_parameters(), fuzz::kFuzzModelSize, "momentum",
                                fuzz::kFuzzShardSizes);
  });
  return 0;
}
