#pragma once
// The shape of one sample as it flows through a model: {features} for vectors, {height, width, channels} for
// channels-last images (NHWC, see compute/backend.h), {tokens, dim} for embedded id sequences. A batch adds
// the sample count in front; every buffer holds `batch x element_count(shape)` floats.
#include <cstddef>
#include <string>
#include <vector>

namespace pstrain::nn {

using Shape = std::vector<std::size_t>;

inline std::size_t element_count(const Shape& shape) {
  std::size_t count = 1;
  for (const std::size_t extent : shape) count *= extent;
  return count;
}

// "28x28x1", "(scalar)" for an empty shape.
std::string to_string(const Shape& shape);

inline bool is_image(const Shape& shape) {
  return shape.size() == 3;
}

}  // namespace pstrain::nn
