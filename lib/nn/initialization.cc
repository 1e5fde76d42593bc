#include "nn/initialization.h"

#include <cmath>

#include "core/counter_random.h"

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

std::uint64_t counter_init_key(std::uint64_t seed, std::string_view name) {
  // FNV-1a over the name's bytes, then mixed with the seed: a tensor's values do not depend on where it sits in
  // the layout (a trainer's model cuts its tables to caches and moves them to the end).
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return combine_key(combine_key(seed, 0x696e6974ull /* "init" */), hash);
}

void fill_counter_uniform(std::uint64_t key, float limit, std::uint64_t first_index, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = (2.0f * counter_uniform(key, first_index + i) - 1.0f) * limit;
  }
}

}  // namespace pstrain::nn
