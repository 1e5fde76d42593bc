#include <gtest/gtest.h>

#include "data/csv_table.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

using testing::expect_error;
using testing::TempDir;

std::filesystem::path write_text(const TempDir& dir, const std::string& name, const std::string& text) {
  testing::write_raw(dir / name, testing::Bytes(text.begin(), text.end()));
  return dir / name;
}

TEST(CsvTable, LabelIsTheLastColumnByDefault) {
  TempDir dir;
  const CsvSamples samples = read_csv_samples(write_text(dir, "a.csv", "0.5,-1,2\n1e-3, 4 ,0\n"));
  EXPECT_EQ(samples.feature_count, 2u);
  EXPECT_EQ(samples.features, (std::vector<float>{0.5f, -1.0f, 1e-3f, 4.0f}));
  EXPECT_EQ(samples.labels, (std::vector<std::int32_t>{2, 0}));
  EXPECT_TRUE(samples.header.empty());
  EXPECT_EQ(samples.label_index, 2u);
}

TEST(CsvTable, AHeaderLineNamesTheLabelColumn) {
  TempDir dir;
  const auto path = write_text(dir, "a.csv", "\"label\",pixel0,pixel1\r\n3,0.25,1\r\n\r\n1,0,+2\r\n");
  for (const std::string& column : {std::string("label"), std::string("first"), std::string("0")}) {
    const CsvSamples samples = read_csv_samples(path, column);
    EXPECT_EQ(samples.header, (std::vector<std::string>{"label", "pixel0", "pixel1"})) << column;
    EXPECT_EQ(samples.labels, (std::vector<std::int32_t>{3, 1})) << column;
    EXPECT_EQ(samples.features, (std::vector<float>{0.25f, 1.0f, 0.0f, 2.0f})) << column;
  }
  EXPECT_EQ(read_csv_samples(path, "pixel1").labels, (std::vector<std::int32_t>{1, 2}));
}

TEST(CsvTable, RefusesALabelColumnTheFileLacks) {
  TempDir dir;
  const auto plain = write_text(dir, "plain.csv", "1,2,0\n");
  expect_error([&] { read_csv_samples(plain, "label"); }, ExitCode::kUsage,
               {"--label-column 'label'", "plain.csv", "no header line"});
  expect_error([&] { read_csv_samples(plain, "3"); }, ExitCode::kUsage, {"--label-column 3", "only 3 columns"});
  const auto named = write_text(dir, "named.csv", "a,b,class\n1,2,0\n");
  expect_error([&] { read_csv_samples(named, "klass"); }, ExitCode::kUsage, {"'klass'", "not a name in its header"});
}

TEST(CsvTable, BadLinesAreNamedByFileAndLine) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"1,2,0\n1,2\n", {"b.csv:2", "2 fields, but the first line has 3"}},
      {"1,2,0\n\n1,x,1\n", {"b.csv:3", "feature 'x' (column 1) is not a finite number"}},
      {"1,nan,0\n", {"b.csv:1", "feature 'nan'"}},
      {"1,1e39,0\n", {"b.csv:1", "feature '1e39'"}},
      {"h1,h2,h3\n1,2,2.5\n", {"b.csv:2", "label '2.5' (column 2) is not a class index"}},
      {"1,2,-1\n", {"b.csv:1", "label '-1'"}},
      {"1,2,\n", {"b.csv:1", "label ''"}},
      {"5\n", {"b.csv:1", "1 column"}},
      {"\n\n", {"b.csv", "no samples"}},
      {"a,b\n", {"b.csv", "no samples"}},
  };
  for (const auto& [text, parts] : cases) {
    const auto path = write_text(dir, "b.csv", text);
    expect_error([&] { read_csv_samples(path); }, ExitCode::kInputData, parts);
  }
  expect_error([&] { read_csv_samples(dir / "missing.csv"); }, ExitCode::kInputData, {"missing.csv", "cannot open"});
}

}  // namespace
}  // namespace pstrain::data
