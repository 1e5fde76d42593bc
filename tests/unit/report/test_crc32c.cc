// CRC-32C against published test vectors: RFC 3720 (iSCSI) appendix B.4, and the "123456789" check value of
// the CRC catalogue (CRC-32/ISCSI, check = 0xE3069283).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "report/crc32c.h"

namespace pstrain::report {
namespace {

TEST(Crc32c, CheckValue) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
}

TEST(Crc32c, Rfc3720Vectors) {
  std::array<unsigned char, 32> bytes{};
  EXPECT_EQ(crc32c(bytes.data(), bytes.size()), 0x8A9136AAu);  // 32 bytes of zeros
  bytes.fill(0xFF);
  EXPECT_EQ(crc32c(bytes.data(), bytes.size()), 0x62A8AB43u);  // 32 bytes of ones
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32c(bytes.data(), bytes.size()), 0x46DD794Eu);  // 0, 1, ..., 31
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<unsigned char>(31 - i);
  EXPECT_EQ(crc32c(bytes.data(), bytes.size()), 0x113FDB5Cu);  // 31, 30, ..., 0
  const std::array<unsigned char, 48> read_pdu{0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                               0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                               0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                               0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(crc32c(read_pdu.data(), read_pdu.size()), 0xD9963A56u);  // an iSCSI read command PDU
}

TEST(Crc32c, ContinuesAcrossPieces) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  const std::uint32_t first = crc32c(text.data(), 10);
  EXPECT_EQ(crc32c(text.data() + 10, text.size() - 10, first), crc32c(text));
  EXPECT_EQ(crc32c(text), 0x22620404u);
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(Crc32c, MaskIsTfRecords) {
  // TFRecord's mask: rotate right 15, add 0xa282ead8; and back.
  EXPECT_EQ(mask_crc(0u), 0xa282ead8u);
  EXPECT_EQ(mask_crc(0x00008000u), 0xa282ead9u);
  for (const std::uint32_t crc : {0u, 1u, 0xE3069283u, 0xFFFFFFFFu, 0x8000u}) EXPECT_EQ(unmask_crc(mask_crc(crc)), crc);
}

}  // namespace
}  // namespace pstrain::report
