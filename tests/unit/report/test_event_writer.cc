// Event files written, then read back record by record (every CRC checked) and decoded: the round trip. The
// independent check, a reader written from the format's documentation, is tests/report/read_events.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"
#include "report/crc32c.h"
#include "report/event.pb.h"
#include "report/event_writer.h"
#include "report/record_file.h"

namespace pstrain::report {
namespace {

namespace fs = std::filesystem;

class EventFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("pstrain_report_" + std::to_string(::getpid()) + "_" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  static std::string contents(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void overwrite(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }

  fs::path folder_;
};

TEST_F(EventFiles, RecordFramingIsTfRecords) {
  fs::create_directories(folder_);
  const fs::path path = folder_ / "records";
  {
    RecordWriter writer(path);
    writer.write("abc");
    writer.write("");
  }
  const std::string bytes = contents(path);
  ASSERT_EQ(bytes.size(), (12 + 3 + 4) + (12 + 0 + 4));
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));  // length, little-endian
  const auto u32 = [&](std::size_t at) {
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i)
      value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return value;
  };
  EXPECT_EQ(u32(8), mask_crc(crc32c(bytes.data(), 8)));
  EXPECT_EQ(bytes.substr(12, 3), "abc");
  EXPECT_EQ(u32(15), mask_crc(crc32c("abc")));
  EXPECT_EQ(read_records(path), (std::vector<std::string>{"abc", ""}));
  EXPECT_THROW(RecordWriter{path}, Error);  // never appends to someone else's file
}

TEST_F(EventFiles, RoundTrip) {
  fs::path path;
  {
    EventWriter writer(folder_ / "run");
    path = writer.path();
    for (int step = 0; step < 3; ++step) {
      writer.write_scalars(step * 10, {{"pass/loss", 1.5 / (step + 1)}, {"pass/staleness", 0.0}});
    }
  }
  EXPECT_EQ(path.parent_path(), folder_ / "run");
  EXPECT_EQ(path.filename().string().rfind("events.out.tfevents.", 0), 0u) << path;
  const std::vector<std::string> records = read_records(path);
  ASSERT_EQ(records.size(), 4u);
  proto::Event event;
  ASSERT_TRUE(event.ParseFromString(records[0]));
  EXPECT_EQ(event.file_version(), "brain.Event:2");
  EXPECT_FALSE(event.has_summary());
  EXPECT_GT(event.wall_time(), 1.7e9);
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(event.ParseFromString(records[step + 1]));
    EXPECT_EQ(event.file_version(), "");
    EXPECT_EQ(event.step(), step * 10);
    ASSERT_EQ(event.summary().value_size(), 2);
    EXPECT_EQ(event.summary().value(0).tag(), "pass/loss");
    EXPECT_FLOAT_EQ(event.summary().value(0).simple_value(), static_cast<float>(1.5 / (step + 1)));
    EXPECT_EQ(event.summary().value(1).tag(), "pass/staleness");
    // A zero is written, not left out as proto3 would leave out a plain field.
    EXPECT_EQ(event.summary().value(1).value_case(), proto::Summary::Value::kSimpleValue);
  }
}

TEST_F(EventFiles, FewerScalarsAfterMoreLeaveNoneBehind) {
  fs::path path;
  {
    EventWriter writer(folder_);
    path = writer.path();
    writer.write_scalars(1, {{"a", 1}, {"b", 2}, {"c", 3}});
    writer.write_scalars(2, {{"d", 4}});
  }
  const std::vector<std::string> records = read_records(path);
  ASSERT_EQ(records.size(), 3u);
  proto::Event event;
  ASSERT_TRUE(event.ParseFromString(records[2]));
  ASSERT_EQ(event.summary().value_size(), 1);
  EXPECT_EQ(event.summary().value(0).tag(), "d");
}

TEST_F(EventFiles, TwoWritersInOneFolderGetTwoFiles) {
  const EventWriter first(folder_);
  const EventWriter second(folder_);
  EXPECT_NE(first.path(), second.path());
}

TEST_F(EventFiles, CorruptionIsFound) {
  fs::path path;
  {
    EventWriter writer(folder_);
    path = writer.path();
    writer.write_scalars(1, {{"loss", 0.25}});
  }
  const std::string good = contents(path);
  ASSERT_EQ(read_records(path).size(), 2u);
  for (const std::size_t at : {std::size_t{0}, std::size_t{9}, std::size_t{14}, good.size() - 1}) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x01);
    overwrite(path, bad);
    EXPECT_THROW(read_records(path), Error) << "byte " << at << " flipped";
  }
  overwrite(path, good.substr(0, good.size() - 2));
  EXPECT_THROW(read_records(path), Error);  // truncated
}

TEST(EventFileName, IsTensorBoards) {
  EXPECT_EQ(event_file_name(1700000000, "node7"), "events.out.tfevents.1700000000.node7");
}

TEST(EventWriterErrors, UnwritableFolderIsAnOutputError) {
  try {
    EventWriter writer("/proc/pstrain-cannot-write-here");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kOutput);
  }
}

}  // namespace
}  // namespace pstrain::report
