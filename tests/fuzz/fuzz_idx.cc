// IDX reader (MNIST / Fashion-MNIST), raw or gzip'd: the input is one file, read as images and as labels, and
// as the pair (images, labels) with itself when it parses as both (it cannot, the magic numbers differ; the
// pair is read against a fixed valid labels file instead).
#include "data/idx.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  const auto input = fuzz::scratch() / "input-idx";
  fuzz::write_file(input, {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] { data::read_idx_images(input); });
  fuzz::expect_clean([&] { data::read_idx_labels(input); });
  // Pairs: the input as images against labels for as many samples as the input claims is not possible without
  // parsing, so pair it with a two-label file; mismatched counts must be refused cleanly too.
  static const auto labels = [] {
    const auto path = fuzz::scratch() / "labels-idx";
    const char bytes[] = {0, 0, 8, 1, 0, 0, 0, 2, 3, 7};
    fuzz::write_file(path, {bytes, sizeof bytes});
    return path;
  }();
  fuzz::expect_clean([&] { data::read_idx_pair(input, labels, "fashion-mnist", 10); });
  fuzz::expect_clean([&] { data::read_idx_pair(labels, input, "fashion-mnist", 10); });
  return 0;
}
