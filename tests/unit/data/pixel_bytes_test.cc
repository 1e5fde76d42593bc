// Image features held as pixel bytes (data/pixel_bytes.h): exactly the floats pstrain-data writes for a uint8 pixel
// (the IDX reader's own arithmetic) become bytes and come back with the same bits; any other float, -0.0f
// included, keeps the features as floats.
#include "data/pixel_bytes.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace pstrain::data {
namespace {

std::uint32_t bits(float value) {
  return std::bit_cast<std::uint32_t>(value);
}

TEST(PixelBytes, EveryPixelValueOfTheIdxReaderRoundTripsBitForBit) {
  std::vector<float> features;
  for (int k = 0; k < 256; ++k) features.push_back(static_cast<float>(static_cast<std::uint8_t>(k)) / 255.0f);
  const auto bytes = as_pixel_bytes(features);
  ASSERT_TRUE(bytes.has_value());
  std::vector<float> back(features.size());
  pixel_bytes_to_floats(*bytes, back);
  for (int k = 0; k < 256; ++k) {
    EXPECT_EQ((*bytes)[static_cast<std::size_t>(k)], k);
    EXPECT_EQ(bits(back[static_cast<std::size_t>(k)]), bits(features[static_cast<std::size_t>(k)])) << k;
  }
}

TEST(PixelBytes, AnyOtherFloatKeepsTheFeaturesAsFloats) {
  const float one_pixel = 3.0f / 255.0f;
  for (const float other : {-0.0f, 0.5f, std::nextafter(one_pixel, 1.0f), std::nextafter(1.0f, 2.0f), 2.0f, -1.0f,
                            std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    EXPECT_FALSE(as_pixel_bytes(std::vector<float>{one_pixel, other, 0.0f}).has_value()) << other;
  }
  EXPECT_TRUE(as_pixel_bytes(std::vector<float>{}).has_value());
}

}  // namespace
}  // namespace pstrain::data
