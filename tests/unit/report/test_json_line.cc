// The JSON that pstrain writes and reads back (report/json_line.h): text and numbers come back exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "report/json_line.h"

namespace pstrain::report {
namespace {

// Non-ASCII in 2-, 3- and 4-byte UTF-8: Latin, CJK, an emoji; the old writer turned every \uXXXX above 0x7f into '?'.
const std::string kText = "mod\xC3\xA8le \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x8E\x89 \"quoted\" back\\slash\ttab";

// "n0", "n1", ... (appended, not "n" + text: GCC 12 warns falsely about that, its bug 105329).
std::string key_of(std::size_t i) {
  std::string key = "n";
  key += std::to_string(i);
  return key;
}

TEST(JsonLine, NonAsciiTextAndFloatsRoundTripExactly) {
  const std::vector<double> numbers{0.1 + 0.2, 1.0 / 3.0, 0.683, 1.2e6, 5e-324, std::numeric_limits<double>::max(),
                                    -0.0,      2.0};
  OrderedJson object = OrderedJson::object();
  object["model"] = kText;
  for (std::size_t i = 0; i < numbers.size(); ++i) object[key_of(i)] = numbers[i];
  const std::string line = json_line(object);
  EXPECT_NE(line.find("\xE6\x97\xA5\xE6\x9C\xAC"), std::string::npos) << "UTF-8 written as is: " << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;

  const auto read = parse_json_object(line);
  ASSERT_TRUE(read) << line;
  EXPECT_EQ(read->at("model").get<std::string>(), kText);
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    const auto value = number_field(*read, key_of(i));
    ASSERT_TRUE(value) << i;
    // Bit for bit: the written text is the shortest that reads back as the same double.
    EXPECT_EQ(std::memcmp(&*value, &numbers[i], sizeof(double)), 0) << numbers[i] << " came back as " << *value;
  }
  EXPECT_NE(line.find("\"n0\": 0.30000000000000004"), std::string::npos) << "17 digits where needed: " << line;
  EXPECT_NE(line.find("\"n2\": 0.683,"), std::string::npos) << "no more digits than needed: " << line;
}

TEST(JsonLine, RandomDoublesRoundTripBitForBit) {
  std::mt19937_64 bits(20261125);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t word = bits();
    double number;
    std::memcpy(&number, &word, sizeof number);
    if (!std::isfinite(number)) continue;
    const auto read = parse_json_object(json_line(OrderedJson{{"x", number}}));
    ASSERT_TRUE(read);
    const double back = *number_field(*read, "x");
    ASSERT_EQ(std::memcmp(&back, &number, sizeof number), 0) << number << " came back as " << back;
    ++checked;
  }
  EXPECT_GT(checked, 19000);
}

TEST(JsonLine, KeepsTheMetricsLineLayout) {
  OrderedJson object = OrderedJson::object();
  object["pass"] = 3;
  object["trainers"] = 2;
  object["acc"] = 0.5;
  object["steps"] = 13.0;
  object["mode"] = "a\"b";
  object["h"] = std::vector<std::int64_t>{1, 2};
  object["none"] = std::nan("");
  EXPECT_EQ(json_line(object),
            R"({"pass": 3, "trainers": 2, "acc": 0.5, "steps": 13, "mode": "a\"b", "h": [1, 2], "none": null})");
}

TEST(JsonLine, InvalidUtf8IsReplacedNotFatal) {
  const std::string line = json_line(OrderedJson{{"path", std::string("caf\xE9.h5")}});  // Latin-1, not UTF-8
  const auto read = parse_json_object(line);
  ASSERT_TRUE(read) << line;
  EXPECT_EQ(read->at("path").get<std::string>(), "caf\xEF\xBF\xBD.h5");  // U+FFFD
  EXPECT_EQ(json_quoted("caf\xE9"), "\"caf\xEF\xBF\xBD\"");
}

TEST(JsonLine, ParsesMetricsAndRejectsTornOrForeignLines) {
  const auto object = parse_json_object(
      R"({"pass": 0, "test_accuracy": 0.683, "mode": "lo\"cal", "h": [0, 2], "x": null, "big": 1.2e+06})");
  ASSERT_TRUE(object);
  EXPECT_DOUBLE_EQ(*number_field(*object, "test_accuracy"), 0.683);
  EXPECT_EQ(object->at("mode").get<std::string>(), "lo\"cal");
  EXPECT_FALSE(number_field(*object, "x"));
  EXPECT_FALSE(number_field(*object, "mode"));
  EXPECT_FALSE(number_field(*object, "missing"));
  EXPECT_DOUBLE_EQ(*number_field(*object, "big"), 1.2e6);
  EXPECT_EQ(*number_field(*object, "pass"), 0.0);
  EXPECT_FALSE(parse_json_object(R"({"pass": 0, "test_acc)"));
  EXPECT_FALSE(parse_json_object("not json"));
  EXPECT_FALSE(parse_json_object("[1, 2]"));
  EXPECT_FALSE(parse_json_object("3"));
  EXPECT_FALSE(parse_json_object(R"({"loss": NaN})"));
  EXPECT_TRUE(parse_json_object("{}"));
}

TEST(JsonLine, DocumentsAreIndentedAndKeepTheirKeyOrder) {
  OrderedJson object = OrderedJson::object();
  object["version"] = "0.1.0";
  object["flags"] = OrderedJson{{"lr", "0.1"}, {"model", kText}};
  const std::string text = json_document(object);
  EXPECT_EQ(text.substr(0, 24), "{\n  \"version\": \"0.1.0\",\n");
  EXPECT_EQ(text.back(), '\n');
  const auto read = parse_json_object(text);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->at("flags").at("model").get<std::string>(), kText);
}

}  // namespace
}  // namespace pstrain::report
