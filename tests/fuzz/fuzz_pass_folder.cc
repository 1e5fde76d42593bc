// The pass-folder reader behind --init-from: parameters.h5 of a complete pass-NNNNN folder.
#include <filesystem>

#include "checkpoint/pass_folder.h"
#include "checkpoint_model.h"
#include "fuzz_util.h"

// The folder has no MANIFEST, as pass folders written before they carried one: the fuzzed bytes reach HDF5
// instead of stopping at the checksum.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  static const auto folder = [] {
    const auto path = fuzz::scratch() / "pass-00000";
    std::filesystem::create_directories(path);
    fuzz::write_file(path / "done", "pass 0\n");
    return path;
  }();
  fuzz::write_file(folder / "parameters.h5", {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean(
      [&] { checkpoint::read_pass_parameters(folder, fuzz::fuzz_model_parameters(), fuzz::kFuzzModelSize); });
  return 0;
}
