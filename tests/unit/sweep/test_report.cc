#include "sweep/report.h"

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace pstrain::sweep {
namespace {

std::string metrics_line(int pass, double accuracy, double loss) {
  return "{\"pass\": " + std::to_string(pass) + ", \"train_loss\": 1.5, \"test_loss\": " + std::to_string(loss) +
         ", \"test_accuracy\": " + std::to_string(accuracy) +
         ", \"elapsed_s\": 0.5, \"mode\": \"local\", \"staleness_histogram\": [0, 1]}\n";
}

// Three sets of 3 passes: set 1 peaks early (best 0.9, final 0.6), set 2 ends best (final 0.8), set 3 not run;
// set 4 stopped after one pass.
struct Fixture {
  testing::TempDir dir;
  std::vector<HyperparameterSet> sets{{1, {{"passes", "3"}, {"lr", "0.5"}}},
                                      {2, {{"passes", "3"}, {"lr", "0.05"}}},
                                      {3, {{"passes", "3"}, {"lr", "0.01"}}},
                                      {4, {{"passes", "3"}, {"lr", "0.1"}}}};
  Fixture() {
    const auto runs = dir.path() / "runs";
    testing::write_text(runs / "set-0001" / "metrics.jsonl",
                        metrics_line(0, 0.7, 0.9) + metrics_line(1, 0.9, 0.5) + metrics_line(2, 0.6, 1.2));
    testing::write_text(runs / "set-0002" / "metrics.jsonl",
                        metrics_line(0, 0.5, 0.9) + metrics_line(1, 0.7, 0.7) + metrics_line(2, 0.8, 0.6));
    testing::write_text(runs / "set-0004" / "metrics.jsonl", metrics_line(0, 0.75, 0.8) + "{\"pass\": 1, \"te");
    for (const char* set : {"set-0001", "set-0002"}) testing::write_text(runs / set / "pass-00002" / "done", "");
  }
};

TEST(Report, RanksByBestAccuracy) {
  Fixture f;
  const Report report = build_report(f.dir.path(), f.sets, RankBy::kBest);
  ASSERT_EQ(report.ranked.size(), 4u);
  EXPECT_EQ(report.ranked[0].id, 1);
  EXPECT_DOUBLE_EQ(*report.ranked[0].best_test_accuracy, 0.9);
  EXPECT_EQ(report.ranked[0].best_pass, 1);
  EXPECT_EQ(report.ranked[0].status, "complete");
  EXPECT_EQ(report.ranked[1].id, 2);
  EXPECT_EQ(report.ranked[2].id, 4);
  EXPECT_EQ(report.ranked[2].status, "incomplete");
  EXPECT_EQ(report.ranked[2].passes_done, 1);
  EXPECT_EQ(report.ranked[2].unreadable_lines, 1);  // the torn last line is skipped, not fatal
  EXPECT_EQ(report.ranked[3].id, 3);
  EXPECT_EQ(report.ranked[3].status, "not run");
  EXPECT_FALSE(report.ranked[3].best_test_accuracy);
  const std::string board = format_leaderboard(report, 10);
  EXPECT_NE(board.find("best: set-0001 best_test_accuracy 0.9: --passes 3 --lr 0.5"), std::string::npos) << board;
}

TEST(Report, RanksByFinalAccuracy) {
  Fixture f;
  const Report report = build_report(f.dir.path(), f.sets, RankBy::kFinal);
  EXPECT_EQ(report.ranked[0].id, 2);
  EXPECT_DOUBLE_EQ(*report.ranked[0].final_test_accuracy, 0.8);
  EXPECT_DOUBLE_EQ(*report.ranked[0].final_test_loss, 0.6);
  EXPECT_EQ(report.ranked[1].id, 4);
  EXPECT_EQ(report.ranked[2].id, 1);
}

TEST(Report, CsvAndJsonAgreeWithTheRanking) {
  Fixture f;
  const Report report = build_report(f.dir.path(), f.sets, RankBy::kBest);
  const std::string csv = report_csv(report);
  EXPECT_EQ(csv.rfind("rank,set,status,passes_done,passes_asked,best_test_accuracy,best_pass,final_test_accuracy,"
                      "final_test_loss,elapsed_s,flags,passes,lr\n",
                      0),
            0u)
      << csv;
  EXPECT_NE(csv.find("\n1,1,complete,3,3,0.9,1,0.6,1.2,0.5,--passes 3 --lr 0.5,3,0.5\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n4,3,not run,0,3,,,,,,--passes 3 --lr 0.01,3,0.01\n"), std::string::npos) << csv;
  const std::string json = report_json(report);
  EXPECT_NE(json.find("\"best_set\": 1,"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"rank\": 1, \"set\": 1, \"name\": \"set-0001\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"best_test_accuracy\": null"), std::string::npos);
  EXPECT_NE(json.find("\"flags\": {\"passes\": \"3\", \"lr\": \"0.5\"}"), std::string::npos);
  write_report_files(f.dir.path(), report);
  EXPECT_TRUE(std::filesystem::exists(f.dir.path() / "report.csv"));
  EXPECT_TRUE(std::filesystem::exists(f.dir.path() / "report.json"));
}

}  // namespace
}  // namespace pstrain::sweep
