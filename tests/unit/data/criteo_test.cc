// The Criteo parser: values as documented (the transform, raw hex ids, empty bags, multi-hot), and every malformed
// line named with its file, line and column; truncated and empty files.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "data/ctr/criteo.h"
#include "data/ctr/line_blocks.h"
#include "test_files.h"

namespace pstrain::data::ctr {
namespace {

using testing::expect_error;
using testing::TempDir;

// A labeled line: label, 13 integers, 26 categorical columns, with the given overrides.
std::string line(const std::string& label, std::vector<std::string> integers, std::vector<std::string> categorical) {
  integers.resize(kCriteoDense);
  categorical.resize(kCriteoFields);
  std::string text = label;
  for (const std::string& value : integers) text += "\t" + value;
  for (const std::string& value : categorical) text += "\t" + value;
  return text + "\n";
}

CriteoParseOptions options(bool labeled = true, bool skip_bad = false) {
  CriteoParseOptions parse;
  parse.file = "day_0.txt";
  parse.labeled = labeled;
  parse.skip_bad = skip_bad;
  return parse;
}

TEST(Criteo, ValuesAreTransformedAndIdsKeptRaw) {
  const std::string text =
      line("1", {"5", "-3", "", "0", "1000000"}, {"68fd1e64", "", "FFFFFFFFFFFFFFFF", "0", "a,b,0c"});
  const CriteoBlock block = parse_criteo_block(text, 0, options());
  ASSERT_EQ(block.columns.samples, 1u);
  EXPECT_EQ(block.columns.labels[0], 1);
  const std::vector<float>& dense = block.columns.dense;
  EXPECT_FLOAT_EQ(dense[0], static_cast<float>(std::log(6.0)));
  EXPECT_EQ(dense[1], 0.0f);  // negative: log(1 + max(x, 0))
  EXPECT_EQ(dense[2], 0.0f);  // empty
  EXPECT_EQ(dense[3], 0.0f);
  EXPECT_FLOAT_EQ(dense[4], static_cast<float>(std::log(1000001.0)));
  EXPECT_EQ(block.columns.values[0], std::vector<std::uint64_t>{0x68fd1e64});
  EXPECT_TRUE(block.columns.values[1].empty());  // empty column: empty bag
  EXPECT_EQ(block.columns.values[2], std::vector<std::uint64_t>{0xffffffffffffffffull});
  EXPECT_EQ(block.columns.values[3], std::vector<std::uint64_t>{0});
  EXPECT_EQ(block.columns.values[4], (std::vector<std::uint64_t>{0xa, 0xb, 0xc}));
  EXPECT_EQ(block.columns.offsets[4], (std::vector<std::uint64_t>{0, 3}));
  EXPECT_EQ(block.sample_lines, std::vector<std::uint64_t>{0});
}

TEST(Criteo, LineWithoutLabelIsReadUnlabeled) {
  std::string text = line("0", {"7"}, {"1f"});
  text.erase(0, 2);  // 39 columns: Criteo's own test file
  EXPECT_FALSE(criteo_line_labeled(text, "test.txt"));
  const CriteoBlock block = parse_criteo_block(text, 0, options(false));
  ASSERT_EQ(block.columns.samples, 1u);
  EXPECT_EQ(block.columns.labels[0], -1);
  EXPECT_FLOAT_EQ(block.columns.dense[0], static_cast<float>(std::log(8.0)));
  EXPECT_EQ(block.columns.values[0], std::vector<std::uint64_t>{0x1f});
}

TEST(Criteo, CrLfAndMissingLastNewlineAreAccepted) {
  std::string text = line("0", {}, {}) + line("1", {}, {"ab"});
  text.insert(text.find('\n'), "\r");
  text.pop_back();
  const CriteoBlock block = parse_criteo_block(text, 0, options());
  EXPECT_EQ(block.columns.samples, 2u);
  EXPECT_EQ(block.columns.values[0], std::vector<std::uint64_t>{0xab});
}

struct BadCase {
  std::string text;
  std::vector<std::string> message;
};

TEST(Criteo, MalformedLinesAreNamedByFileLineAndColumn) {
  const std::string good = line("0", {"1"}, {"aa"});
  const std::vector<BadCase> cases{
      {"0\t1\t2\n", {"day_0.txt:3:", "expected 40 tab-separated columns", "found 3"}},
      {line("0", {}, {"xyz"}), {"day_0.txt:3:", "column 15 (C1)", "'xyz' is not a hexadecimal id"}},
      {line("2", {}, {}), {"day_0.txt:3:", "column 1 (label)", "label '2' is not 0 or 1"}},
      {line("0", {"", "1.5"}, {}), {"day_0.txt:3:", "column 3 (I2)", "'1.5' is not a 64-bit integer"}},
      {line("0", {"99999999999999999999"}, {}), {"column 2 (I1)", "not a 64-bit integer"}},
      {line("0", {}, {"", "", "", "", "", "", "", "", "", "", "", "", "",
                      "", "", "", "", "", "", "", "", "", "", "", "", "12345678901234567"}),
       {"column 40 (C26)", "1 to 16 digits"}},
      {line("0", {}, {"ab,"}), {"column 15 (C1)", "an empty id"}},
      {"\n", {"day_0.txt:3:", "found 1"}},
  };
  for (const BadCase& bad : cases) {
    const std::string text = good + good + bad.text + good;
    expect_error([&] { parse_criteo_block(text, 0, options()); }, ExitCode::kInputData, bad.message);
  }
}

TEST(Criteo, SkippedBadLinesAreCountedAndLeaveNothingBehind) {
  const std::string text = line("0", {"1"}, {"aa"}) + line("0", {}, {"aa", "zz"}) + "junk\n" + line("1", {"2"}, {"bb"});
  const CriteoBlock block = parse_criteo_block(text, 10, options(true, true));
  EXPECT_EQ(block.lines, 4u);
  EXPECT_EQ(block.bad_lines, 2u);
  ASSERT_EQ(block.first_bad.size(), 2u);
  EXPECT_EQ(block.first_bad[0].line, 12u);
  EXPECT_EQ(block.first_bad[1].line, 13u);
  EXPECT_EQ(block.columns.samples, 2u);
  EXPECT_EQ(block.sample_lines, (std::vector<std::uint64_t>{10, 13}));
  // The bad line's C1 id ("aa", parsed before C2 failed) was taken back.
  EXPECT_EQ(block.columns.values[0], (std::vector<std::uint64_t>{0xaa, 0xbb}));
  EXPECT_EQ(block.columns.offsets[0], (std::vector<std::uint64_t>{0, 1, 2}));
}

TEST(Criteo, FirstLineOfAnotherFormatIsRefused) {
  expect_error([] { criteo_line_labeled("a,b,c", "x.csv"); }, ExitCode::kInputData,
               {"x.csv:1:", "found 1", "not the Criteo format"});
}

TEST(LineBlocks, BlocksHoldWholeLinesAndCountThem) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += std::string(static_cast<std::size_t>(i % 37), 'x') + "\n";
  text += "last";
  testing::write_gz(dir / "a.gz", testing::Bytes(text.begin(), text.end()));
  LineBlocks blocks(dir / "a.gz", 100);
  std::string block, joined;
  while (blocks.next(block)) {
    EXPECT_TRUE(block.back() == '\n' || joined.size() + block.size() == text.size());
    joined += block;
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(blocks.lines(), 1001u);
  EXPECT_EQ(count_lines(dir / "a.gz"), 1001u);
}

TEST(LineBlocks, TruncatedGzipIsAnErrorNamingTheFile) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += line("0", {std::to_string(i)}, {"ab"});
  testing::write_gz(dir / "day.gz", testing::Bytes(text.begin(), text.end()));
  testing::Bytes bytes = testing::read_raw(dir / "day.gz");
  bytes.resize(bytes.size() / 2);
  testing::write_raw(dir / "day.gz", bytes);
  expect_error([&] { count_lines(dir / "day.gz"); }, ExitCode::kInputData, {"day.gz", "truncated gzip data"});
}

TEST(LineBlocks, EmptyFileHasNoLines) {
  TempDir dir;
  testing::write_raw(dir / "empty.txt", {});
  EXPECT_EQ(count_lines(dir / "empty.txt"), 0u);
}

}  // namespace
}  // namespace pstrain::data::ctr
