// The trainers' own optimizer state in a checkpoint (--mode geo with a stateful optimizer): each trainer's file
// back to it, and the saved trainers' mean for a resume with another number of trainers.
#include "checkpoint/trainer_states.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"

namespace pstrain::checkpoint {
namespace {

namespace fs = std::filesystem;

// A model of two tensors: 2 x 3 and 4.
const std::vector<nn::ParameterInfo> kParameters = {{"fc.weight", {2, 3}, 0, 6}, {"fc.bias", {4}, 6, 4}};
constexpr std::size_t kFlat = 10;

std::vector<float> values(float scale) {
  std::vector<float> out;
  for (std::size_t i = 0; i < kFlat; ++i) out.push_back(scale * (0.1f + static_cast<float>(i)));
  return out;
}

class TrainerStatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("pstrain-trainer-states-" + std::to_string(::getpid()));
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  void write_two_trainers() {
    write_trainer_state(folder_, 0, 2, kParameters, {{"velocity", values(1.0f)}});
    write_trainer_state(folder_, 1, 2, kParameters, {{"velocity", values(3.0f)}});
  }

  fs::path folder_;
};

TEST_F(TrainerStatesTest, AsManyTrainersGetEachItsOwnStateBack) {
  write_two_trainers();
  for (int trainer = 0; trainer < 2; ++trainer) {
    const ResumedTrainerState read = read_trainer_state(folder_, trainer, 2, {"velocity"}, kParameters, kFlat);
    ASSERT_EQ(read.state.size(), 1u);
    EXPECT_EQ(read.state[0].second, values(trainer == 0 ? 1.0f : 3.0f)) << "trainer " << trainer;
    EXPECT_EQ(read.saved_trainers, 2);
  }
}

TEST_F(TrainerStatesTest, AnotherNumberOfTrainersStartsEveryOneFromTheSavedMean) {
  write_two_trainers();
  std::vector<float> mean;
  for (std::size_t i = 0; i < kFlat; ++i) {
    mean.push_back(static_cast<float>((static_cast<double>(values(1.0f)[i]) + values(3.0f)[i]) / 2.0));
  }
  for (const int trainers : {1, 3}) {
    for (int trainer = 0; trainer < trainers; ++trainer) {
      const ResumedTrainerState read = read_trainer_state(folder_, trainer, trainers, {"velocity"}, kParameters, kFlat);
      EXPECT_EQ(read.state[0].second, mean) << "trainer " << trainer << " of " << trainers;
    }
  }
}

TEST_F(TrainerStatesTest, AMissingTrainersFileOrStateIsNamed) {
  write_trainer_state(folder_, 1, 2, kParameters, {{"velocity", values(1.0f)}});
  try {
    read_trainer_state(folder_, 0, 2, {"velocity"}, kParameters, kFlat);
    FAIL() << "a checkpoint without trainer 0's file was read";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("1 trainer state files of 2"), std::string::npos) << error.what();
  }
  write_trainer_state(folder_, 0, 2, kParameters, {{"velocity", values(1.0f)}});
  try {
    read_trainer_state(folder_, 0, 2, {"m", "v"}, kParameters, kFlat);
    FAIL() << "adam's state was read from a momentum trainer's file";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("holds no optimizer state 'm'"), std::string::npos) << error.what();
  }
}

TEST_F(TrainerStatesTest, FileNamesAreRecognised) {
  EXPECT_EQ(trainer_state_file(3, 12), "trainer-00003-of-00012.h5");
  EXPECT_TRUE(is_trainer_state_file(trainer_state_file(3, 12)));
  EXPECT_FALSE(is_trainer_state_file("rows-emb-00000-of-00001.h5"));
}

}  // namespace
}  // namespace pstrain::checkpoint
