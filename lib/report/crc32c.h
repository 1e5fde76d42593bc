#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, as in iSCSI, RFC 3720) and the masked form that
// TFRecord files store, so that a CRC of data which itself holds CRCs does not look like a valid one.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pstrain::report {

// CRC of `size` bytes, continuing from a previous crc32c() result (0 to start).
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t previous = 0);
inline std::uint32_t crc32c(std::string_view bytes) {
  return crc32c(bytes.data(), bytes.size());
}

// TFRecord's mask: rotate right by 15 bits and add a constant.
constexpr std::uint32_t mask_crc(std::uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}
constexpr std::uint32_t unmask_crc(std::uint32_t masked) {
  const std::uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace pstrain::report
