#include "simulation/job_profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace pstrain::simulation {
namespace {

namespace fs = std::filesystem;

class JobProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("pstrain-profile-" + std::to_string(::getpid()));
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path write(const std::string& text) {
    const fs::path path = folder_ / "job.profile";
    std::ofstream(path) << text;
    return path;
  }
  fs::path folder_;
};

TEST_F(JobProfileTest, WrittenProfileReadsBackTheSameLayersParametersAndMemory) {
  JobProfile profile;
  profile.model = "mlp";
  profile.batch = 64;
  profile.parameters = {{"fc1.weight", 200704}, {"fc1.bias", 256}};
  profile.layers = {{"fc1", 0.000202163366, 0.000404326732}, {"act1", 1.25e-07, 2.5e-07}};
  profile.trainer_bytes = 11399168;
  profile.baseline_bytes = 20963328;
  write_profile(profile, folder_ / "out.profile");
  const JobProfile read = read_profile(folder_ / "out.profile");
  EXPECT_EQ(read.model, "mlp");
  EXPECT_EQ(read.batch, 64u);
  EXPECT_EQ(read.parameter_sizes(), (std::vector<std::size_t>{200704, 256}));
  EXPECT_EQ(read.parameter_count(), 200960u);
  ASSERT_EQ(read.layers.size(), 2u);
  EXPECT_EQ(read.layers[1].name, "act1");
  EXPECT_NEAR(read.step_seconds(), 0.000202163366 + 0.000404326732 + 1.25e-07 + 2.5e-07, 1e-15);
  EXPECT_EQ(read.trainer_bytes, 11399168u);
  EXPECT_EQ(read.baseline_bytes, 20963328u);
}

TEST_F(JobProfileTest, RowTableAndItsIdBatchesReadBack) {
  JobProfile profile;
  profile.model = "nplm";
  profile.batch = 2;
  profile.parameters = {{"out.bias", 5}, {"embed.weight", 5 * 3}, {"out.weight", 30}};
  profile.layers = {{"embed", 1e-6, 2e-6}};
  profile.tables = {{"embed.weight", 5, 3, 2}};
  profile.id_batches = {{0, 4, 4, 1}, {2, 3, 0, 0}};
  write_profile(profile, folder_ / "out.profile");
  const JobProfile read = read_profile(folder_ / "out.profile");
  ASSERT_EQ(read.tables.size(), 1u);
  EXPECT_EQ(read.tables[0].parameter, "embed.weight");
  EXPECT_EQ(read.tables[0].rows, 5u);
  EXPECT_EQ(read.tables[0].width, 3u);
  EXPECT_EQ(read.tables[0].ids_per_sample, 2u);
  EXPECT_EQ(read.id_batches, profile.id_batches);
  EXPECT_EQ(read.parameter_offset("embed.weight"), 5u);  // after out.bias
}

TEST_F(JobProfileTest, TableIdsOutsideItsRowsOrOfAnotherBatchSizeAreRefused) {
  const std::string head =
      "model nplm\nbatch 2\nparameter embed.weight 15\nlayer embed 1e-6 2e-6\n"
      "table embed.weight 5 3 2\n";
  EXPECT_NO_THROW(read_profile(write(head + "ids 0 1 2 4\n")));
  EXPECT_THROW(read_profile(write(head + "ids 0 1 2 5\n")), Error);  // row 5 of 5
  EXPECT_THROW(read_profile(write(head + "ids 0 1 2\n")), Error);    // 3 ids for 2 samples of 2
  EXPECT_THROW(read_profile(write(head)), Error);                    // a table without batches
  EXPECT_THROW(read_profile(write(head + "table embed.weight 4 3 2\nids 0 1 2 3\n")), Error);  // two tables
  const std::string wrong_size =
      "model nplm\nbatch 2\nparameter embed.weight 14\nlayer embed 1e-6 2e-6\n"
      "table embed.weight 5 3 2\nids 0 1 2 3\n";
  EXPECT_THROW(read_profile(write(wrong_size)), Error);  // 5 x 3 is not 14
}

TEST_F(JobProfileTest, LayerRangesAreItsParametersInTheFlatVector) {
  JobProfile profile;
  profile.parameters = {{"fc1.weight", 6}, {"fc1.bias", 2}, {"fc10.weight", 3}, {"fc2.weight", 4}};
  using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;
  EXPECT_EQ(profile.parameter_ranges("fc1"), (Ranges{{0, 6}, {6, 2}}));  // not fc10's
  EXPECT_EQ(profile.parameter_ranges("fc2"), (Ranges{{11, 4}}));
  EXPECT_TRUE(profile.parameter_ranges("act1").empty());
}

TEST_F(JobProfileTest, UnreadableLineIsNamedWithItsNumber) {
  const fs::path path = write("model mlp\nbatch 8\nparameter w 10\nlayer fc1 oops 1\n");
  try {
    read_profile(path);
    FAIL() << "a broken layer line was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("job.profile:4: expected"), std::string::npos) << error.what();
  }
}

TEST_F(JobProfileTest, ProfileWithoutLayersIsRefused) {
  const fs::path path = write("# comment\nmodel mlp\nbatch 8\nparameter w 10\n");
  EXPECT_THROW(read_profile(path), Error);
}

TEST_F(JobProfileTest, NegativeLayerTimeIsRefused) {
  const fs::path path = write("model mlp\nbatch 8\nparameter w 10\nlayer fc1 -0.1 0.2\n");
  EXPECT_THROW(read_profile(path), Error);
}

}  // namespace
}  // namespace pstrain::simulation
