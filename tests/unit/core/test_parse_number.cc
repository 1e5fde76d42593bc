#include "core/parse_number.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace pstrain {
namespace {

TEST(ParseNumber, AWholeStringParsesAsTheLibraryReadsIt) {
  EXPECT_EQ(parse_number<double>("1e-3"), 1e-3);
  EXPECT_EQ(parse_number<double>("-2.5"), -2.5);
  EXPECT_EQ(parse_number<float>("0.1"), 0.1f);
  EXPECT_EQ(parse_number<long long>("-42"), -42);
  EXPECT_EQ(parse_number<std::size_t>("18446744073709551615"), std::numeric_limits<std::size_t>::max());
  EXPECT_EQ(parse_number<int>("7"), 7);
}

TEST(ParseNumber, TrailingCharactersOrNothingAreNotANumber) {
  for (const char* text : {"", "1.5x", "12 ", "x", "1,2", "--3"}) {
    EXPECT_FALSE(parse_number<double>(text)) << "'" << text << "'";
    EXPECT_FALSE(parse_number<long long>(text)) << "'" << text << "'";
  }
  EXPECT_FALSE(parse_number<long long>("1.5"));  // an integer type takes no fraction
}

TEST(ParseNumber, NonFiniteAndOutOfRangeValuesAreRefused) {
  for (const char* text : {"nan", "inf", "-inf", "1e999"}) EXPECT_FALSE(parse_number<double>(text)) << text;
  EXPECT_FALSE(parse_number<float>("1e39"));
  EXPECT_FALSE(parse_number<int>("2147483648"));
  EXPECT_EQ(parse_number<int>("-2147483648"), std::numeric_limits<int>::min());
  EXPECT_FALSE(parse_number<long long>("9223372036854775808"));
  EXPECT_FALSE(parse_number<std::uint32_t>("4294967296"));
}

TEST(ParseNumber, AnUnsignedTypeRefusesASignInsteadOfWrapping) {
  EXPECT_FALSE(parse_number<std::size_t>("-1"));
  EXPECT_FALSE(parse_number<std::uint64_t>(" -1"));
  EXPECT_EQ(parse_number<std::size_t>("0"), 0u);
}

}  // namespace
}  // namespace pstrain
