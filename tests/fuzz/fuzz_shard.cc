// HDF5 shard reader (what the trainer reads from --data-dir): the input is one train-NNNNN.h5 file, read for its
// attributes only (as the layout planning does) and in full.
#include "data/shard.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  const auto input = fuzz::scratch() / "train-00000.h5";
  fuzz::write_file(input, {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] { data::read_shard_meta(input); });
  fuzz::expect_clean([&] { data::read_shard(input); });
  return 0;
}
