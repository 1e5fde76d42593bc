// Keyed tables in checkpoints (checkpoint/keyed_table_rows.h): a server's held ids, their rows, optimizer state,
// sketch, counters and index written to its row file and read back whole or limited to the ids a reader owns;
// files of hashed and keyed tables are never taken for each other.
#include "checkpoint/keyed_table_rows.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace pstrain::checkpoint {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kWidth = 2;
const TableRowsSpec kTable{"c0.weight", 100, kWidth};

KeyedRowsState state_of(const std::vector<std::int64_t>& ids) {
  KeyedRowsState state;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    state.ids.push_back(ids[k]);
    state.last_seen.push_back(static_cast<std::int64_t>(10 + k));
    state.counts.push_back(k + 1);
    state.held_rows.push_back(static_cast<std::int64_t>(ids.size() - 1 - k));
    for (std::size_t c = 0; c < kWidth; ++c) state.rows.push_back(static_cast<float>(ids[k]) + 0.25f * c);
  }
  state.state.emplace_back("sum", state.rows);
  for (float& v : state.state[0].second) v *= 2;
  state.sketch = {1, 2, 3, 65535};
  state.index = {7, 0, -3, 1, 0, -1, 0, -1};
  state.admitted = 9;
  state.evicted = 4;
  state.refused = 1;
  return state;
}

class KeyedTableRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("pstrain-keyed-rows-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path folder_;
};

TEST_F(KeyedTableRowsTest, WrittenStateReadsBackWhole) {
  const KeyedRowsState written = state_of({-3, 7, 42});
  write_keyed_table_rows(folder_, kTable, 1, 2, written);
  write_keyed_table_rows(folder_, kTable, 0, 2, state_of({}));
  EXPECT_EQ(keyed_table_shards(folder_, kTable), 2);
  const KeyedRowsState read = read_keyed_table_rows(folder_, kTable, 1, 2, {"sum"}, [](std::int64_t) { return true; });
  EXPECT_EQ(read.ids, written.ids);
  EXPECT_EQ(read.last_seen, written.last_seen);
  EXPECT_EQ(read.counts, written.counts);
  EXPECT_EQ(read.held_rows, written.held_rows);
  EXPECT_EQ(read.rows, written.rows);
  ASSERT_EQ(read.state.size(), 1u);
  EXPECT_EQ(read.state[0], written.state[0]);
  EXPECT_EQ(read.sketch, written.sketch);
  EXPECT_EQ(read.index, written.index);
  EXPECT_EQ(read.admitted, 9u);
  EXPECT_EQ(read.evicted, 4u);
  EXPECT_EQ(read.refused, 1u);
  const KeyedRowsState empty = read_keyed_table_rows(folder_, kTable, 0, 2, {"sum"}, [](std::int64_t) { return true; });
  EXPECT_TRUE(empty.ids.empty() && empty.rows.empty() && empty.state.at(0).second.empty());
}

TEST_F(KeyedTableRowsTest, AReaderKeepsOnlyTheIdsItOwnsWithTheirRowsAndState) {
  write_keyed_table_rows(folder_, kTable, 0, 1, state_of({1, 2, 3, 4}));
  const KeyedRowsState even =
      read_keyed_table_rows(folder_, kTable, 0, 1, {"sum"}, [](std::int64_t id) { return id % 2 == 0; });
  EXPECT_EQ(even.ids, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(even.last_seen, (std::vector<std::int64_t>{11, 13}));
  EXPECT_EQ(even.held_rows, (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(even.rows, (std::vector<float>{2, 2.25f, 4, 4.25f}));
  EXPECT_EQ(even.state.at(0).second, (std::vector<float>{4, 4.5f, 8, 8.5f}));
  EXPECT_EQ(even.sketch, (std::vector<std::uint16_t>{1, 2, 3, 65535})) << "the sketch stays whole";
}

TEST_F(KeyedTableRowsTest, HashedAndKeyedRowFilesAreNeverTakenForEachOther) {
  write_keyed_table_rows(folder_, kTable, 0, 1, state_of({5}));
  EXPECT_THROW(read_table_rows(folder_, kTable, 0, 1, {}), Error) << "a hashed reader of a keyed file";
  const fs::path hashed = folder_ / "hashed";
  fs::create_directories(hashed);
  write_table_rows(hashed, kTable, 0, 1, std::vector<float>(kTable.rows * kWidth, 0.5f), {});
  EXPECT_THROW(keyed_table_shards(hashed, kTable), Error) << "a keyed reader of a hashed file";
  EXPECT_THROW(read_keyed_table_rows(hashed, kTable, 0, 1, {}, [](std::int64_t) { return true; }), Error);
  EXPECT_THROW(keyed_table_shards(folder_ / "none", kTable), Error) << "no row files";
}

TEST_F(KeyedTableRowsTest, AFileWithoutAStateTheRunNeedsIsRefusedNamingIt) {
  write_keyed_table_rows(folder_, kTable, 0, 1, state_of({5}));
  try {
    read_keyed_table_rows(folder_, kTable, 0, 1, {"m"}, [](std::int64_t) { return true; });
    FAIL() << "read a state the file lacks";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("lacks /m"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pstrain::checkpoint
