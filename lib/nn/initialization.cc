#include "nn/initialization.h"

#include <cmath>

namespace pstrain::nn {

float unit_float(std::uint64_t raw_bits) {
  constexpr float kTwoToMinus24 = 1.0f / 16777216.0f;
  return static_cast<float>(raw_bits >> 40) * kTwoToMinus24;
}

float init_limit(compute::Activation activation, std::size_t fan_in, std::size_t fan_out) {
  // sqrt and division are correctly rounded in IEEE arithmetic, so the limit is the same everywhere.
  const double fan =
      activation == compute::Activation::kRelu ? static_cast<double>(fan_in) : static_cast<double>(fan_in + fan_out);
  return static_cast<float>(std::sqrt(6.0 / fan));
}

float named_init_limit(const std::string& rule, std::size_t fan_in, std::size_t fan_out) {
  return init_limit(rule == "kaiming" ? compute::Activation::kRelu : compute::Activation::kTanh, fan_in, fan_out);
}

void fill_uniform(std::mt19937_64& engine, float limit, std::span<float> out) {
  for (float& value : out) {
    // 2u - 1 is exact for a 24-bit u, so the only rounding is the final multiply.
    value = (2.0f * unit_float(engine()) - 1.0f) * limit;
  }
}

}  // namespace pstrain::nn
