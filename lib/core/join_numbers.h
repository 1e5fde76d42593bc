#pragma once
// Numbers written one after the other with a separator between them ("28x28x1", "13,64,16"): shapes and widths in
// messages and in the files a pass folder describes itself with, written the same way everywhere.
#include <string>
#include <string_view>

namespace pstrain {

// `values`: any range of integers (a shape, HDF5 dimensions).
template <typename Numbers>
std::string join_numbers(const Numbers& values, std::string_view separator) {
  std::string text;
  for (const auto value : values) {
    if (!text.empty()) text += separator;
    text += std::to_string(value);
  }
  return text;
}

}  // namespace pstrain
