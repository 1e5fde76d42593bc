// pstrain-sweep's search-space parser: the input is the text of a search-space file.
#include "fuzz_util.h"
#include "sweep/search_space.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] { sweep::parse_search_space(text, "space.ini"); });
  return 0;
}
