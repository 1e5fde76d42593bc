// Readers of a user's own arrays (pstrain-data npz|npy|csv): the input is read as one .npy file (header, then the
// features and labels conversions), as one .npz archive (every array in it), and as one CSV file (label last, and
// first).
#include "data/csv_table.h"
#include "data/npy.h"
#include "data/npz.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  fuzz::expect_clean([&] {
    const data::NpyArray array = data::parse_npy(std::vector<std::uint8_t>(data, data + size), "input.npy");
    fuzz::expect_clean([&] { data::npy_features(array, "input.npy"); });
    fuzz::expect_clean([&] { data::npy_labels(array, "input.npy"); });
  });
  const auto input = fuzz::scratch() / "input";
  fuzz::write_file(input, {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] {
    const data::NpzArchive archive(input);
    for (const std::string& key : archive.keys()) fuzz::expect_clean([&] { archive.read(key); });
  });
  fuzz::expect_clean([&] { data::read_csv_samples(input, "last"); });
  fuzz::expect_clean([&] { data::read_csv_samples(input, "first"); });
  return 0;
}
