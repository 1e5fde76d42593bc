#include "data/pixel_bytes.h"

#include <array>
#include <bit>
#include <cmath>

#include "core/error.h"

namespace pstrain::data {

namespace {

const std::array<float, 256>& pixel_values() {
  static const std::array<float, 256> values = [] {
    std::array<float, 256> table{};
    for (int k = 0; k < 256; ++k) table[static_cast<std::size_t>(k)] = static_cast<float>(k) / 255.0f;
    return table;
  }();
  return values;
}

}  // namespace

float pixel_value(std::uint8_t k) {
  return pixel_values()[k];
}

std::optional<std::vector<std::uint8_t>> as_pixel_bytes(std::span<const float> features) {
  const std::array<float, 256>& values = pixel_values();
  std::vector<std::uint8_t> bytes(features.size());
  for (std::size_t i = 0; i < features.size(); ++i) {
    const float value = features[i];
    if (!(value >= 0.0f && value <= 1.0f)) return std::nullopt;  // NaN too
    const auto k = static_cast<std::uint8_t>(std::lround(value * 255.0f));
    // Bits, not ==: -0.0f equals 0.0f but is another float, and the batch must hold the shard's own bits.
    if (std::bit_cast<std::uint32_t>(values[k]) != std::bit_cast<std::uint32_t>(value)) return std::nullopt;
    bytes[i] = k;
  }
  return bytes;
}

void pixel_bytes_to_floats(std::span<const std::uint8_t> bytes, std::span<float> out) {
  PSTRAIN_ASSERT(bytes.size() == out.size(), bytes.size(), " bytes for ", out.size(), " floats");
  const std::array<float, 256>& values = pixel_values();
  for (std::size_t i = 0; i < bytes.size(); ++i) out[i] = values[bytes[i]];
}

}  // namespace pstrain::data
