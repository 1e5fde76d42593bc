#include "nn/shape.h"

#include "core/join_numbers.h"

namespace pstrain::nn {

std::string to_string(const Shape& shape) {
  if (shape.empty()) return "(scalar)";
  return join_numbers(shape, "x");
}

}  // namespace pstrain::nn
