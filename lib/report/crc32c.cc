#include "report/crc32c.h"

#include <array>

namespace pstrain::report {

namespace {

// Byte-at-a-time table: event files are small (a few hundred bytes per record), speed does not matter here.
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t previous) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint32_t crc = ~previous;
  for (std::size_t i = 0; i < size; ++i) crc = (crc >> 8) ^ kTable[(crc ^ bytes[i]) & 0xFFu];
  return ~crc;
}

}  // namespace pstrain::report
