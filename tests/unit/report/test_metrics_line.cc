#include "report/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pstrain::report {
namespace {

TEST(JsonLine, EncodesNumbersStringsArraysAndEscapes) {
  JsonLine line;
  line.add("pass", std::int64_t{3}).add("acc", 0.5).add("mode", std::string("a\"b")).add_array("h", {1, 2});
  EXPECT_EQ(line.str(), "{\"pass\": 3, \"acc\": 0.5, \"mode\": \"a\\\"b\", \"h\": [1, 2]}");
}

// What the trainer writes into metrics.jsonl is what pstrain, pstrain-sweep and keep_best_valid read back.
TEST(JsonLine, NonAsciiStringAndFloatRoundTripExactlyThroughWriterAndReader) {
  const std::string model = "r\xC3\xA9seau \xE6\xB7\xB1\xE5\xB1\xA4 \xF0\x9F\xA7\xA0";  // UTF-8: e-acute, CJK, emoji
  const double loss = 0.1 + 0.2, accuracy = 1.0 / 3.0;
  JsonLine line;
  line.add("pass", std::int64_t{7}).add("model", model).add("train_loss", loss).add("test_accuracy", accuracy);
  const auto read = report::parse_json_object(line.str());
  ASSERT_TRUE(read) << line.str();
  EXPECT_EQ(read->at("model").get<std::string>(), model);
  EXPECT_EQ(*report::number_field(*read, "train_loss"), loss);  // exact, not to 6 digits
  EXPECT_EQ(*report::number_field(*read, "test_accuracy"), accuracy);
  EXPECT_EQ(*report::number_field(*read, "pass"), 7.0);
}

TEST(JsonLine, NonFiniteBecomesNull) {
  JsonLine line;
  line.add("loss", std::nan(""));
  EXPECT_EQ(line.str(), "{\"loss\": null}");
}

}  // namespace
}  // namespace pstrain::report
