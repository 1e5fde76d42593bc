// A pass folder's model.txt and model.ini (checkpoint/pass_model.h): written into the folder and its MANIFEST,
// read back as written, and rejected with the file named when damaged.
#include "checkpoint/pass_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "checkpoint/pass_folder.h"
#include "core/error.h"

namespace pstrain::checkpoint {
namespace {

namespace fs = std::filesystem;

PassModelInfo example_info() {
  PassModelInfo info;
  info.source = "preset mlp";
  info.input = {28, 28, 1};
  info.classes = 10;
  info.dataset = "fashion-mnist";
  info.data_dir = "/data/fm";
  info.data_fingerprint = "test.h5:0123abcd";
  return info;
}

TEST(PassModelInfo, ParsesWhatItFormats) {
  PassModelInfo info = example_info();
  info.tokens = true;
  info.vocab_size = 1234;
  const PassModelInfo back = parse_pass_model_info(format_pass_model_info(info), "model.ini");
  EXPECT_EQ(back.source, info.source);
  EXPECT_EQ(back.input, info.input);
  EXPECT_EQ(back.classes, info.classes);
  EXPECT_EQ(back.dataset, info.dataset);
  EXPECT_TRUE(back.tokens);
  EXPECT_EQ(back.vocab_size, 1234u);
  EXPECT_EQ(back.data_dir, info.data_dir);
  EXPECT_EQ(back.data_fingerprint, info.data_fingerprint);
}

TEST(PassModelInfo, TrainingClickRateRoundTripsBitForBitAndIsOptional) {
  PassModelInfo info = example_info();
  EXPECT_FALSE(parse_pass_model_info(format_pass_model_info(info), "model.ini").training_click_rate.has_value());
  info.training_click_rate = 0.1 + 1e-17 * 3;  // not a short decimal
  const std::optional<double> back =
      parse_pass_model_info(format_pass_model_info(info), "model.ini").training_click_rate;
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, *info.training_click_rate);
  for (const std::string rate : {"x", "1.5", "-0.1", "nan"}) {
    EXPECT_THROW(parse_pass_model_info(format_pass_model_info(example_info()) + "training_click_rate = " + rate + "\n",
                                       "model.ini"),
                 Error)
        << rate;
  }
}

TEST(PassModelInfo, RejectsAMissingOrMalformedValueNamingTheFile) {
  for (const std::string text : {"input = 28,28\nvocab_size = 0\n", "input = 28,x\nclasses = 10\nvocab_size = 0\n",
                                 "classes = 10\nvocab_size = 0\n", "input = 28,0\nclasses = 10\nvocab_size = 0\n",
                                 "input = 28\nclasses = -3\nvocab_size = 0\n", "input = 28\nclasses\n"}) {
    try {
      parse_pass_model_info(text, "folder/model.ini");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kInputData);
      EXPECT_NE(std::string(error.what()).find("folder/model.ini"), std::string::npos) << error.what();
    }
  }
}

class PassModelFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    output_ = fs::temp_directory_path() / ("pstrain-pass-model-" + std::to_string(::getpid()));
    fs::remove_all(output_);
    fs::create_directories(output_);
  }
  void TearDown() override { fs::remove_all(output_); }
  fs::path output_;
};

TEST_F(PassModelFolderTest, PassFolderCarriesBothFilesInItsManifest) {
  const std::vector<nn::ParameterInfo> layout{{"fc.weight", {2, 1}, 0, 2}};
  write_pass_folder(output_, 0, layout, std::vector<float>{1, 2}, false, {}, {},
                    pass_model_files("fc dense units=2\n", example_info()));
  const fs::path folder = output_ / pass_folder_name(0);
  std::vector<std::string> names;
  for (const ManifestEntry& entry : read_manifest(folder, kPassManifest)) names.push_back(entry.name);
  EXPECT_NE(std::find(names.begin(), names.end(), kModelTextFile), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), kModelInfoFile), names.end());
  const auto model = read_pass_model(folder);
  ASSERT_TRUE(model.has_value());
  EXPECT_EQ(model->description, "fc dense units=2\n");
  EXPECT_EQ(model->info.input, (std::vector<std::size_t>{28, 28, 1}));
  // A changed byte in model.txt is a damaged folder.
  std::ofstream(folder / kModelTextFile, std::ios::app) << "#";
  EXPECT_THROW(verify_pass_folder(folder), Error);
}

TEST_F(PassModelFolderTest, OlderFolderHasNoModelAndOneFileAloneIsAnError) {
  EXPECT_FALSE(read_pass_model(output_).has_value());
  std::ofstream(output_ / kModelTextFile) << "fc dense units=2\n";
  try {
    read_pass_model(output_);
    FAIL() << "model.txt without model.ini accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("model.ini"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pstrain::checkpoint
