#include "nn/shape.h"

namespace pstrain::nn {

std::string to_string(const Shape& shape) {
  if (shape.empty()) return "(scalar)";
  std::string text;
  for (const std::size_t extent : shape) text += (text.empty() ? "" : "x") + std::to_string(extent);
  return text;
}

}  // namespace pstrain::nn
