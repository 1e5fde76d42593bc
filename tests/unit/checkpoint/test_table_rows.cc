// Row tables in checkpoints (checkpoint/table_rows.h): each shard's rows in a file of its own, read back as the
// rows of any shard of any number of shards, from row files or from a table written whole in model.h5.
#include "checkpoint/table_rows.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "core/error.h"

namespace pstrain::checkpoint {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kRows = 11;
constexpr std::size_t kWidth = 3;
const TableRowsSpec kTable{"embed.weight", kRows, kWidth};

float value(std::uint64_t row, std::size_t column, float salt) {
  return salt + static_cast<float>(row * 10 + column);
}

// Shard `shard` of `shards`' rows, local order, with values that name their row.
std::vector<float> rows_of(int shard, int shards, float salt) {
  std::vector<float> rows;
  for (std::uint64_t row = static_cast<std::uint64_t>(shard); row < kRows; row += static_cast<std::uint64_t>(shards)) {
    for (std::size_t c = 0; c < kWidth; ++c) rows.push_back(value(row, c, salt));
  }
  return rows;
}

class TableRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("pstrain-table-rows-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  void write_by_rows(int shards) {
    for (int shard = 0; shard < shards; ++shard) {
      const std::vector<float> rows = rows_of(shard, shards, 0.0f);
      const std::vector<float> velocity = rows_of(shard, shards, 0.5f);
      write_table_rows(folder_, kTable, shard, shards, rows, {{"velocity", velocity}});
    }
  }
  void expect_shard(int shard, int shards) {
    const TableRows read = read_table_rows(folder_, kTable, shard, shards, {"velocity"});
    EXPECT_EQ(read.rows, rows_of(shard, shards, 0.0f)) << "shard " << shard << " of " << shards;
    ASSERT_EQ(read.state.size(), 1u);
    EXPECT_EQ(read.state[0], rows_of(shard, shards, 0.5f)) << "shard " << shard << " of " << shards;
  }

  fs::path folder_;
};

TEST_F(TableRowsTest, RowsOfEveryShardAreDealtByRowModuloShards) {
  EXPECT_EQ(rows_of_shard(11, 0, 3), 4u);
  EXPECT_EQ(rows_of_shard(11, 1, 3), 4u);
  EXPECT_EQ(rows_of_shard(11, 2, 3), 3u);
  EXPECT_EQ(rows_of_shard(2, 3, 5), 0u);
  EXPECT_EQ(table_rows_file("embed.weight", 1, 2), "rows-embed.weight-00001-of-00002.h5");
}

TEST_F(TableRowsTest, WrittenOnTwoShardsReadsBackOnOneTwoThreeAndFiveShards) {
  write_by_rows(2);
  EXPECT_EQ(list_table_row_files(folder_).size(), 2u);
  EXPECT_TRUE(holds_table_rows(folder_, "embed.weight"));
  EXPECT_FALSE(holds_table_rows(folder_, "embed"));
  for (const int shards : {1, 2, 3, 5}) {
    for (int shard = 0; shard < shards; ++shard) expect_shard(shard, shards);
  }
}

// Row-wise Adagrad's state, one float per row, written on 3 shards (with 13 shards one holds no row at all) and
// re-dealt to other shard counts into the caller's memory, as a server resuming does.
TEST_F(TableRowsTest, AStatePerRowIsReDealtLikeTheRows) {
  const auto per_row = [](int shard, int shards) {
    std::vector<float> sums;
    for (std::uint64_t row = static_cast<std::uint64_t>(shard); row < kRows;
         row += static_cast<std::uint64_t>(shards)) {
      sums.push_back(0.25f + static_cast<float>(row));
    }
    return sums;
  };
  for (const int written : {3, 13}) {
    fs::remove_all(folder_);
    fs::create_directories(folder_);
    for (int shard = 0; shard < written; ++shard) {
      write_table_rows(folder_, kTable, shard, written, rows_of(shard, written, 0.0f),
                       {{"row_sum", per_row(shard, written)}});
    }
    EXPECT_EQ(table_row_states(folder_, kTable), std::vector<std::string>{"row_sum"});
    for (const int shards : {1, 2, 4, 13}) {
      for (int shard = 0; shard < shards; ++shard) {
        std::vector<float> rows(rows_of_shard(kRows, shard, shards) * kWidth);
        std::vector<float> sums(rows_of_shard(kRows, shard, shards));
        read_table_rows(folder_, kTable, shard, shards, rows, {{"row_sum", sums}});
        EXPECT_EQ(rows, rows_of(shard, shards, 0.0f)) << "shard " << shard << " of " << shards << " from " << written;
        EXPECT_EQ(sums, per_row(shard, shards)) << "shard " << shard << " of " << shards << " from " << written;
      }
    }
  }
}

TEST_F(TableRowsTest, ATableWrittenWholeInTheModelFileIsCutForAnyShard) {
  Checkpoint checkpoint;
  checkpoint.model.optimizer = "momentum";
  checkpoint.model.parameters = rows_of(0, 1, 0.0f);
  checkpoint.model.optimizer_state = {{"velocity", rows_of(0, 1, 0.5f)}};
  checkpoint.training.consumed = {{0}};
  const std::vector<nn::ParameterInfo> layout = {{"embed.weight", {kRows, kWidth}, 0, kRows * kWidth, true}};
  const fs::path written = write_checkpoint(folder_, checkpoint, layout, "", {});
  folder_ = written;
  EXPECT_FALSE(holds_table_rows(folder_, "embed.weight"));
  for (const int shards : {1, 3}) {
    for (int shard = 0; shard < shards; ++shard) expect_shard(shard, shards);
  }
}

TEST_F(TableRowsTest, ACheckpointWithRowFilesReadsWholeForARunWithoutServers) {
  // A run of the parameter service writes the table by rows; a local run resuming from it reads it whole.
  const fs::path temporary = create_checkpoint_folder(folder_, 5);
  for (int shard = 0; shard < 3; ++shard) {
    write_table_rows(temporary, kTable, shard, 3, rows_of(shard, 3, 0.0f), {{"velocity", rows_of(shard, 3, 0.5f)}});
  }
  Checkpoint dense;
  dense.model.optimizer = "momentum";
  dense.model.parameters = {7.0f, 8.0f};
  dense.model.optimizer_state = {{"velocity", {1.0f, 2.0f}}};
  dense.training.global_step = 5;
  dense.training.consumed = {{0}};
  const fs::path written = publish_checkpoint(temporary, folder_, dense, {{"output.bias", {2}, 0, 2}}, "", {});
  const std::vector<nn::ParameterInfo> whole = {{"output.bias", {2}, 0, 2},
                                                {"embed.weight", {kRows, kWidth}, 2, kRows * kWidth, true}};
  const Checkpoint read = read_checkpoint(written, whole, 2 + kRows * kWidth, "momentum", {1});
  std::vector<float> expected = {7.0f, 8.0f};
  for (const float v : rows_of(0, 1, 0.0f)) expected.push_back(v);
  EXPECT_EQ(read.model.parameters, expected);
  ASSERT_EQ(read.model.optimizer_state.size(), 1u);
  EXPECT_EQ(read.model.optimizer_state[0].second[2 + kWidth], value(1, 0, 0.5f));
}

TEST_F(TableRowsTest, AMissingRowFileOrAnotherTableSizeIsRefusedNamingTheFile) {
  write_by_rows(3);
  fs::remove(folder_ / table_rows_file("embed.weight", 1, 3));
  try {
    read_table_rows(folder_, kTable, 0, 2, {});
    FAIL() << "a missing row file was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("rows-embed.weight-00001-of-00003.h5 is missing"), std::string::npos)
        << error.what();
  }
  write_by_rows(3);
  try {
    read_table_rows(folder_, {"embed.weight", kRows + 1, kWidth}, 0, 1, {});
    FAIL() << "another table size was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("11 x 3"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pstrain::checkpoint
