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

// metrics.jsonl's two kinds of record (report/metrics.h): a reader tells them apart without guessing.
TEST(MetricsRecord, PassAndEvaluationRecordsToldApart) {
  const auto kind = [](const std::string& line) { return metrics_record_kind(*parse_json_object(line)); };
  EXPECT_EQ(kind("{\"pass\": 0, \"test_loss\": 0.5}"), MetricsRecord::kPass);
  EXPECT_EQ(kind("{\"kind\": \"eval\", \"step\": 25, \"in_pass\": 0, \"test_auc\": 0.7}"), MetricsRecord::kEvaluation);
  EXPECT_EQ(kind("{\"kind\": \"eval\", \"test_auc\": 0.7}"), MetricsRecord::kOther);  // no step
  EXPECT_EQ(kind("{\"kind\": \"future\", \"pass\": 1}"), MetricsRecord::kOther);      // not a pass record
  EXPECT_EQ(kind("{\"test_loss\": 0.5}"), MetricsRecord::kOther);
}

// A resume from the checkpoint at pass 1, global step 250 keeps pass 0's record and the evaluations up to step 250
// (the one at 250 was written before that checkpoint), and drops what the run writes again.
TEST(MetricsRecord, ResumeKeepsRecordsUpToTheCheckpointAndDropsTheRest) {
  const auto kept = [](const std::string& line) { return kept_on_resume(*parse_json_object(line), 1, 250); };
  EXPECT_TRUE(kept("{\"pass\": 0, \"test_loss\": 0.5}"));
  EXPECT_FALSE(kept("{\"pass\": 1, \"test_loss\": 0.5}"));
  EXPECT_FALSE(kept("{\"pass\": 2, \"test_loss\": 0.5}"));
  EXPECT_TRUE(kept("{\"kind\": \"eval\", \"step\": 225, \"in_pass\": 0}"));
  EXPECT_TRUE(kept("{\"kind\": \"eval\", \"step\": 250, \"in_pass\": 1}"));
  EXPECT_FALSE(kept("{\"kind\": \"eval\", \"step\": 251, \"in_pass\": 1}"));
  EXPECT_FALSE(kept("{\"kind\": \"eval\", \"step\": 500, \"in_pass\": 2}"));
  EXPECT_TRUE(kept("{\"note\": \"a line of another kind stays\"}"));
}

}  // namespace
}  // namespace pstrain::report
