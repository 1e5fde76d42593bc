#pragma once
// Image features held as the bytes they came from. pstrain-data writes a uint8 pixel k as the float
// static_cast<float>(k) / 255.0f (idx.cc, cifar.cc), so a shard of images holds only 256 distinct floats; a trainer
// that keeps them as bytes holds a quarter of the memory, and turns a byte back into exactly the float the shard
// held (the same table of 256 values), so every batch, and every trained result, is bit-for-bit what it was.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace pstrain::data {

// static_cast<float>(k) / 255.0f.
float pixel_value(std::uint8_t k);

// The byte k of every feature, when every feature has exactly the bits of pixel_value(k) for some k; nothing when
// one does not (features scaled otherwise, token ids, a user's own floats): those are held as floats.
std::optional<std::vector<std::uint8_t>> as_pixel_bytes(std::span<const float> features);

// out[i] = pixel_value(bytes[i]); the spans have the same size.
void pixel_bytes_to_floats(std::span<const std::uint8_t> bytes, std::span<float> out);

}  // namespace pstrain::data
