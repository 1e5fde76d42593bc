#include "train/train_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/options.h"

namespace pstrain::train {
namespace {

TrainConfig resolve(std::vector<std::string> extra) {
  std::vector<std::string> args = {"pstrain", "--data-dir", "d", "--output-dir", "o"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for (const auto& arg : args) argv.push_back(arg.c_str());
  const char* environment[] = {nullptr};
  const auto options = parse_layered_options(train_options(), static_cast<int>(argv.size()), argv.data(), environment);
  return resolve_train_config(options.values);
}

void expect_rejected(std::vector<std::string> extra, const std::string& fragment) {
  try {
    resolve(extra);
    FAIL() << "accepted " << extra.front();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(TrainConfig, DefaultsAndParsedValues) {
  const TrainConfig config = resolve({"--hidden", "32,16,8", "--mode", "async", "--lr", "0.1"});
  EXPECT_EQ(config.hidden, (std::vector<std::size_t>{32, 16, 8}));
  EXPECT_EQ(config.mode, Mode::kAsync);
  EXPECT_FLOAT_EQ(config.optimizer.learning_rate, 0.1f);
  EXPECT_EQ(config.batch_size, 64u);
}

TEST(TrainConfig, BadValuesNameTheirFlag) {
  expect_rejected({"--batch-size", "0"}, "--batch-size");
  expect_rejected({"--batch-size", "-3"}, "--batch-size");
  expect_rejected({"--lr", "0"}, "--lr");
  expect_rejected({"--lr", "-1"}, "--lr");
  expect_rejected({"--lr", "nan"}, "--lr");
  expect_rejected({"--passes", "0"}, "--passes");
  expect_rejected({"--mode", "fast"}, "--mode");
  expect_rejected({"--hidden", "32,x"}, "--hidden");
  expect_rejected({"--hidden", "32,0"}, "--hidden");
  expect_rejected({"--model", "resnet"}, "--model");
  expect_rejected({"--activation", "gelu"}, "gelu");
  expect_rejected({"--device", "tpu"}, "--device");
}

TEST(TrainConfig, CnnAllreduceAndDeviceFlags) {
  const TrainConfig config = resolve({"--model", "cnn", "--conv-filters", "16,32,64", "--kernel-size", "5", "--hidden",
                                      "128", "--mode", "allreduce", "--device", "auto", "--check-replicas-every-steps",
                                      "10"});
  EXPECT_EQ(config.model, "cnn");
  EXPECT_EQ(config.conv_filters, (std::vector<std::size_t>{16, 32, 64}));
  EXPECT_EQ(config.kernel_size, 5u);
  EXPECT_EQ(config.hidden, (std::vector<std::size_t>{128}));
  EXPECT_EQ(config.mode, Mode::kAllreduce);
  EXPECT_EQ(to_string(config.mode), "allreduce");
  EXPECT_EQ(config.device, "auto");
  EXPECT_EQ(config.check_replicas_every_steps, 10);
  EXPECT_EQ(resolve({"--device", "gpu"}).device, "gpu");
  EXPECT_EQ(resolve({}).device, "cpu");
}

TEST(TrainConfig, BadCnnAndAllreduceValuesNameTheirFlag) {
  expect_rejected({"--kernel-size", "4"}, "--kernel-size");
  expect_rejected({"--kernel-size", "0"}, "--kernel-size");
  expect_rejected({"--conv-filters", "32,,64"}, "--conv-filters");
  expect_rejected({"--conv-filters", "0"}, "--conv-filters");
  expect_rejected({"--mode", "allreduce", "--num-pservers", "2"}, "no parameter servers");
  expect_rejected({"--mode", "allreduce", "--dispatch", "dynamic"}, "--dispatch");
  expect_rejected({"--check-replicas-every-steps", "-1"}, "--check-replicas-every-steps");
}

TEST(TrainConfig, MissingRequiredFolderIsAnError) {
  std::vector<const char*> argv = {"pstrain", "--data-dir", "d"};
  const char* environment[] = {nullptr};
  EXPECT_THROW(parse_layered_options(train_options(), 3, argv.data(), environment), Error);
}

}  // namespace
}  // namespace pstrain::train
