// CIFAR-10 binary batch reader: the input is one batch file.
#include "data/cifar.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  const auto input = fuzz::scratch() / "data_batch_1.bin";
  fuzz::write_file(input, {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] { data::read_cifar10_batches({input}); });
  return 0;
}
