// Keyed tables between a checkpoint and a server (run_common/keyed_checkpoint.h): resumed on as many servers with
// the same cap, a server takes its file as it was, index included; on another number of servers it takes the ids
// it owns from every file, the most recently used within its cap, the sketches added without overflow and the
// counters once.
#include "run_common/keyed_checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ps/keyed_rows.h"

namespace pstrain::run_common {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kWidth = 2;

ps::TableSpec keyed_table(std::uint64_t rows_per_shard) {
  ps::TableSpec table{"c0.weight", 0, 8, kWidth, 1};
  table.keys.rows_per_shard = rows_per_shard;
  return table;
}

// A server's state holding `ids` (rows 0..), last seen at their own value, in a file of shard `shard` of `shards`.
void write_shard(const fs::path& folder, const ps::TableSpec& table, int shard, int shards,
                 const std::vector<std::int64_t>& ids, std::uint16_t sketch_value) {
  checkpoint::KeyedRowsState state;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    state.ids.push_back(ids[k]);
    state.last_seen.push_back(ids[k]);
    state.counts.push_back(1);
    state.held_rows.push_back(static_cast<std::int64_t>(k));
    state.rows.insert(state.rows.end(), {static_cast<float>(ids[k]), -static_cast<float>(ids[k])});
  }
  state.state.emplace_back("sum", state.rows);
  const auto capacity = static_cast<std::int64_t>(table.keys.rows_per_shard - 1);
  const ps::KeyedRowsLayout layout = ps::keyed_rows_layout(capacity, 16);
  state.sketch.assign(layout.sketch_depth * layout.sketch_width, sketch_value);
  const auto buckets = ps::keyed_index_buckets(static_cast<std::int64_t>(table.keys.rows_per_shard - 1));
  state.index.assign(2 * buckets, -1);
  for (std::size_t k = 0; k < ids.size(); ++k) state.index[2 * k] = ids[k], state.index[2 * k + 1] = 0;
  state.admitted = 10;
  state.evicted = 3;
  checkpoint::write_keyed_table_rows(folder, {table.name, table.rows, table.width}, shard, shards, state);
}

class KeyedCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("pstrain-keyed-checkpoint-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path folder_;
};

TEST_F(KeyedCheckpointTest, OnAsManyServersWithTheSameCapAServerTakesItsFileAndIndexAsTheyWere) {
  const ps::TableSpec table = keyed_table(5);
  write_shard(folder_, table, 0, 2, {2, 9}, 1);
  write_shard(folder_, table, 1, 2, {4}, 1);
  const ps::KeyedShardState state = keyed_rows_to_resume(folder_, table, 1, 2, {"sum"});
  ASSERT_EQ(state.entries.size(), 1u);
  EXPECT_EQ(state.entries[0].id, 4);
  EXPECT_EQ(state.held_rows, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(state.index.size(), ps::keyed_index_buckets(4));
  EXPECT_EQ(state.counters.admitted, 10u);
  const ps::KeyedShardState wider = keyed_rows_to_resume(folder_, keyed_table(9), 1, 2, {"sum"});
  EXPECT_TRUE(wider.index.empty()) << "another cap: the index is rebuilt";
}

TEST_F(KeyedCheckpointTest, OnOneServerItTakesEveryIdTheMostRecentWithinItsCap) {
  const ps::TableSpec two = keyed_table(4);
  write_shard(folder_, two, 0, 2, {10, 30, 50}, 40000);
  write_shard(folder_, two, 1, 2, {20, 40}, 40000);
  const ps::KeyedShardState one = keyed_rows_to_resume(folder_, keyed_table(5), 0, 1, {"sum"});  // a cap of 4
  ASSERT_EQ(one.entries.size(), 4u);
  std::vector<std::int64_t> ids;
  for (const ps::KeyedEntry& entry : one.entries) {
    ids.push_back(entry.id);
    const auto at = static_cast<std::size_t>(entry.row);
    EXPECT_EQ(one.rows.at(at * kWidth), static_cast<float>(entry.id)) << "an entry's row is its place in rows";
    EXPECT_EQ(one.state.at(0).second.at(at * kWidth), static_cast<float>(entry.id));
  }
  EXPECT_EQ(ids, (std::vector<std::int64_t>{20, 30, 40, 50})) << "id 10, the least recently used, dropped";
  EXPECT_TRUE(one.index.empty());
  EXPECT_EQ(one.sketch, std::vector<std::uint16_t>(4 * 8, 65535)) << "the sketches added, saturating";
  EXPECT_EQ(one.counters.admitted, 20u);
  EXPECT_EQ(one.counters.evicted, 3u + 3u + 1u) << "the files' evictions and the one past the cap";
}

// Another cap per server sizes the sketch otherwise (ps::keyed_rows_layout): an id's counters are its hash mod the
// width, so a narrower sketch sums the counters that fold onto one, a wider one repeats them.
TEST_F(KeyedCheckpointTest, AnotherCapFoldsOrSpreadsTheSketchSoNoEstimateFalls) {
  const ps::TableSpec small = keyed_table(4);  // a cap of 3: 8 counters a row
  checkpoint::KeyedRowsState state;
  for (std::uint16_t c = 0; c < 4 * 8; ++c) state.sketch.push_back(c);
  checkpoint::write_keyed_table_rows(folder_, {small.name, small.rows, small.width}, 0, 1, state);
  const ps::KeyedShardState wide = keyed_rows_to_resume(folder_, keyed_table(101), 0, 1, {});  // 256 a row
  ASSERT_EQ(wide.sketch.size(), 4u * 256);
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t j = 0; j < 256; ++j) ASSERT_EQ(wide.sketch[r * 256 + j], r * 8 + j % 8) << r << " " << j;
  }
  const ps::KeyedShardState narrow = keyed_rows_to_resume(folder_, keyed_table(2), 0, 1, {});  // a cap of 1: 2
  ASSERT_EQ(narrow.sketch.size(), 4u * 2);
  for (std::size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(narrow.sketch[r * 2], (r * 8) + (r * 8 + 2) + (r * 8 + 4) + (r * 8 + 6));
    EXPECT_EQ(narrow.sketch[r * 2 + 1], (r * 8 + 1) + (r * 8 + 3) + (r * 8 + 5) + (r * 8 + 7));
  }
}

TEST_F(KeyedCheckpointTest, OnMoreServersEachTakesTheIdsItOwnsAndOnlyServerZeroTheCounters) {
  const ps::TableSpec one = keyed_table(9);
  write_shard(folder_, one, 0, 1, {1, 2, 3, 4, 5, 6, 7, 8}, 2);
  std::vector<std::int64_t> all;
  for (int server = 0; server < 3; ++server) {
    const ps::KeyedShardState state = keyed_rows_to_resume(folder_, keyed_table(9), server, 3, {"sum"});
    for (const ps::KeyedEntry& entry : state.entries) {
      EXPECT_EQ(ps::key_owner(entry.id, 3), server);
      all.push_back(entry.id);
    }
    EXPECT_EQ(state.counters.admitted, server == 0 ? 10u : 0u);
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

}  // namespace
}  // namespace pstrain::run_common
