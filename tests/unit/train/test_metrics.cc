#include "train/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pstrain::train {
namespace {

TEST(JsonLine, EncodesNumbersStringsArraysAndEscapes) {
  JsonLine line;
  line.add("pass", std::int64_t{3}).add("acc", 0.5).add("mode", std::string("a\"b")).add_array("h", {1, 2});
  EXPECT_EQ(line.str(), "{\"pass\": 3, \"acc\": 0.5, \"mode\": \"a\\\"b\", \"h\": [1, 2]}");
}

TEST(JsonLine, NonFiniteBecomesNull) {
  JsonLine line;
  line.add("loss", std::nan(""));
  EXPECT_EQ(line.str(), "{\"loss\": null}");
}

}  // namespace
}  // namespace pstrain::train
