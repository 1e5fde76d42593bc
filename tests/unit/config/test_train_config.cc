#include "config/train_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/options.h"
#include "nn/presets.h"

namespace pstrain::config {
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

// The test suite's fault injection is no product option (tests/tools/pstrain_faults): no --test-* flag is listed,
// parsed or saved.
TEST(TrainConfig, NoTestOnlyFlagIsAnOption) {
  const auto user_options = train_options();  // named: a range over a temporary's member would dangle
  for (const auto& option : user_options.options()) {
    EXPECT_NE(option->long_name().rfind("test-", 0), 0u) << "--help lists --" << option->long_name();
  }
  EXPECT_THROW(resolve({"--test-step-delay-ms", "7"}), Error);
  std::vector<const char*> argv = {"pstrain", "--data-dir", "d", "--output-dir", "o"};
  const char* environment[] = {nullptr};
  const auto options = parse_layered_options(train_options(), 5, argv.data(), environment);
  const std::string ini = to_ini(options.values);
  EXPECT_EQ(ini.find("test-"), std::string::npos) << ini;
  EXPECT_NE(ini.find("data-dir = d"), std::string::npos) << ini;
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
  EXPECT_EQ(config.mode, modes::Mode::kAsync);
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
  expect_rejected({"--model", "lenet"}, "--model");
  expect_rejected({"--model", "cnn", "--model-file", "m.model"}, "both name a model");
  expect_rejected({"--width", "0"}, "--width");
  expect_rejected({"--activation", "gelu"}, "gelu");
  expect_rejected({"--device", "tpu"}, "--device");
}

TEST(TrainConfig, CnnAllreduceAndDeviceFlags) {
  const TrainConfig config =
      resolve({"--model", "cnn", "--conv-filters", "16,32,64", "--kernel-size", "5", "--hidden", "128", "--mode",
               "allreduce", "--device", "auto", "--check-replicas-every-steps", "10"});
  EXPECT_EQ(config.model, "cnn");
  EXPECT_EQ(config.conv_filters, (std::vector<std::size_t>{16, 32, 64}));
  EXPECT_EQ(config.kernel_size, 5u);
  EXPECT_EQ(config.hidden, (std::vector<std::size_t>{128}));
  EXPECT_EQ(config.mode, modes::Mode::kAllreduce);
  EXPECT_EQ(modes::to_string(config.mode), "allreduce");
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
  const auto options = parse_layered_options(train_options(), 3, argv.data(), environment);
  try {
    resolve_train_config(options.values);
    FAIL() << "accepted a run without --output-dir";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("--output-dir"), std::string::npos) << error.what();
  }
  std::vector<const char*> no_data = {"pstrain", "--output-dir", "o"};
  EXPECT_THROW(parse_layered_options(train_options(), 3, no_data.data(), environment), Error);
}

TEST(TrainConfig, DescribeModelNeedsNoOutputFolderAndModelFileReplacesThePreset) {
  const auto options = [](std::vector<const char*> argv) {
    const char* environment[] = {nullptr};
    return parse_layered_options(train_options(), static_cast<int>(argv.size()), argv.data(), environment);
  };
  const TrainConfig describe = resolve_train_config(options({"pstrain", "--data-dir", "d", "--describe-model"}).values);
  EXPECT_TRUE(describe.describe_model);
  const TrainConfig file = resolve({"--model-file", "m.model"});
  EXPECT_EQ(file.model, "file");
  ASSERT_TRUE(file.model_file.has_value());
  EXPECT_EQ(file.model_file->string(), "m.model");
  const TrainConfig resnet = resolve({"--model", "resnet", "--width", "0.25", "--batch-norm", "false"});
  EXPECT_EQ(resnet.model, "resnet");
  EXPECT_DOUBLE_EQ(resnet.width, 0.25);
  EXPECT_FALSE(resnet.batch_norm);
}

TEST(TrainConfig, NplmFlags) {
  const TrainConfig nplm = resolve({"--model", "nplm"});
  EXPECT_EQ(nplm.model, "nplm");
  EXPECT_EQ(nplm.hidden, (std::vector<std::size_t>{kNplmHidden}));  // not mlp's 256,128
  EXPECT_EQ(nplm.embedding_dim, 30u);
  EXPECT_FALSE(nplm.direct);
  const TrainConfig set = resolve({"--model", "nplm", "--hidden", "none", "--embedding-dim", "60", "--direct"});
  EXPECT_TRUE(set.hidden.empty());
  EXPECT_EQ(set.embedding_dim, 60u);
  EXPECT_TRUE(set.direct);
  EXPECT_THROW(resolve({"--model", "nplm", "--embedding-dim", "0"}), Error);
}

TEST(TrainConfig, EveryPresetNameIsAModel) {
  for (const std::string& name : nn::preset_names()) EXPECT_EQ(resolve({"--model", name}).model, name);
  EXPECT_THROW(resolve({"--model", "dlrn"}), Error);
}

TEST(TrainConfig, ClickPresetsTrainWithAdagradTheirLearningRateOnBatchesOf128UnlessFlagsSayOtherwise) {
  for (const std::string name : {"dlrm", "deepfm"}) {
    const TrainConfig config = resolve({"--model", name});
    EXPECT_EQ(config.optimizer.kind, "adagrad");
    EXPECT_FLOAT_EQ(config.optimizer.learning_rate, name == "deepfm" ? kDeepFmLearningRate : 0.05);
    EXPECT_EQ(config.batch_size, kClickBatchSize);
    EXPECT_EQ(config.embedding_dim, kClickEmbeddingDim);
    EXPECT_EQ(config.table_rows, 0u);  // auto: from the data's distinct ids
    EXPECT_EQ(config.hidden,
              name == "dlrm" ? (std::vector<std::size_t>{512, 256}) : (std::vector<std::size_t>{400, 400}));
  }
  const TrainConfig set = resolve({"--model", "dlrm", "--optimizer", "adam", "--batch-size", "32", "--embedding-dim",
                                   "4", "--hidden", "8", "--bottom-hidden", "32,16", "--table-rows", "1000"});
  EXPECT_EQ(set.optimizer.kind, "adam");
  EXPECT_EQ(set.batch_size, 32u);
  EXPECT_EQ(set.embedding_dim, 4u);
  EXPECT_EQ(set.hidden, std::vector<std::size_t>{8});
  EXPECT_EQ(set.bottom_hidden, (std::vector<std::size_t>{32, 16}));
  EXPECT_EQ(set.table_rows, 1000u);
  EXPECT_FLOAT_EQ(resolve({"--model", "deepfm", "--lr", "0.05"}).optimizer.learning_rate, 0.05);
  EXPECT_EQ(resolve({}).optimizer.kind, "momentum");  // the other models keep theirs
  EXPECT_FLOAT_EQ(resolve({}).optimizer.learning_rate, 0.05);
}

TEST(TrainConfig, ScheduleOptimiserAndAugmentFlags) {
  const TrainConfig defaults = resolve({});
  EXPECT_FALSE(defaults.augment.enabled());
  EXPECT_FALSE(defaults.optimizer.nesterov);
  EXPECT_TRUE(defaults.optimizer.decay_bias_and_norm);
  EXPECT_EQ(defaults.label_smoothing, 0.0f);
  EXPECT_EQ(defaults.optimizer.schedule, "constant");

  const TrainConfig config =
      resolve({"--lr", "0.4", "--lr-schedule", "piecewise", "--lr-points", "0,5,24", "--lr-factors", "0,1,0",
               "--lr-warmup-passes", "0.5", "--nesterov", "--no-decay-bias-and-norm", "--weight-decay", "5e-4",
               "--label-smoothing", "0.2", "--augment", "crop:4,flip,cutout:8"});
  EXPECT_EQ(config.optimizer.schedule, "piecewise");
  EXPECT_EQ(config.optimizer.lr_points, (std::vector<double>{0, 5, 24}));
  EXPECT_EQ(config.optimizer.lr_factors, (std::vector<double>{0, 1, 0}));
  EXPECT_DOUBLE_EQ(config.optimizer.warmup_passes, 0.5);
  EXPECT_TRUE(config.optimizer.nesterov);
  EXPECT_FALSE(config.optimizer.decay_bias_and_norm);
  EXPECT_FLOAT_EQ(config.label_smoothing, 0.2f);
  EXPECT_EQ(config.augment.crop_padding, 4u);
  EXPECT_TRUE(config.augment.flip);
  EXPECT_EQ(config.augment.cutout, 8u);

  const TrainConfig step =
      resolve({"--lr-schedule", "step", "--lr-step-passes", "3", "--lr-step-gamma", "0.5", "--nesterov=false"});
  EXPECT_DOUBLE_EQ(step.optimizer.step_passes, 3);
  EXPECT_DOUBLE_EQ(step.optimizer.step_gamma, 0.5);
  EXPECT_FALSE(step.optimizer.nesterov);
}

TEST(TrainConfig, BadScheduleAugmentAndSmoothingValuesNameTheProblem) {
  const std::vector<std::string> piecewise{"--lr-schedule", "piecewise", "--lr-factors", "0,1,0"};
  const auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), piecewise.begin(), piecewise.end());
    return extra;
  };
  expect_rejected(with({"--lr-points", "0,5,3"}), "strictly increasing");
  expect_rejected(with({"--lr-points", "0,5,5"}), "strictly increasing");
  expect_rejected(with({"--lr-points", "-1,5,24"}), ">= 0");
  expect_rejected(with({"--lr-points", "0,x,24"}), "--lr-points");
  expect_rejected(with({"--lr-points", "0,5"}), "one factor per point");
  expect_rejected({"--lr-schedule", "piecewise"}, "--lr-points");
  expect_rejected({"--lr-schedule", "linear"}, "--lr-schedule");
  expect_rejected({"--lr-schedule", "step"}, "--lr-step-passes");
  expect_rejected({"--lr-warmup-passes", "-1"}, "--lr-warmup-passes");
  expect_rejected({"--optimizer", "adam", "--nesterov"}, "--nesterov");
  expect_rejected({"--label-smoothing", "1"}, "--label-smoothing");
  expect_rejected({"--label-smoothing", "-0.1"}, "--label-smoothing");
  expect_rejected({"--label-smoothing", "nan"}, "--label-smoothing");
  expect_rejected({"--augment", "rotate:3"}, "--augment");
  expect_rejected({"--augment", "crop:0"}, "--augment");
}

// --node-aggregation: parsed, auto by default, and `on` refused (naming the combination) where no common step sums
// the trainers' gradients, or where --overlap true asks for each trainer's blocks to stream.
TEST(TrainConfig, NodeAggregationParsedAndRefusedWithoutACommonStep) {
  EXPECT_EQ(resolve({}).node_aggregation, NodeAggregation::kAuto);
  EXPECT_EQ(resolve({"--node-aggregation", "on"}).node_aggregation, NodeAggregation::kOn);
  EXPECT_EQ(resolve({"--node-aggregation", "on", "--mode", "geo"}).node_aggregation, NodeAggregation::kOn);
  EXPECT_EQ(resolve({"--node-aggregation", "off", "--mode", "async"}).node_aggregation, NodeAggregation::kOff);
  EXPECT_EQ(resolve({"--mode", "ssp"}).node_aggregation, NodeAggregation::kAuto);  // auto is off there
  expect_rejected({"--node-aggregation", "yes"}, "--node-aggregation 'yes' is not one of auto, on, off");
  for (const char* mode : {"async", "ssp", "allreduce"}) {
    expect_rejected({"--node-aggregation", "on", "--mode", mode},
                    std::string("it needs --mode sync or geo, not --mode ") + mode);
  }
  expect_rejected({"--node-aggregation", "on", "--overlap", "true"}, "--node-aggregation on with --overlap true");
}

TEST(TrainConfig, EvalEveryStepsTakesModesWithACommonStepGeoAtItsMeetings) {
  EXPECT_EQ(resolve({}).eval_every_steps, 0);
  EXPECT_EQ(resolve({"--eval-every-steps", "25"}).eval_every_steps, 25);
  EXPECT_EQ(resolve({"--eval-every-steps", "25", "--mode", "allreduce"}).eval_every_steps, 25);
  EXPECT_EQ(resolve({"--eval-every-steps", "8", "--mode", "geo", "--geo-steps", "4"}).eval_every_steps, 8);
  EXPECT_EQ(resolve({"--eval-every-steps", "0", "--mode", "async"}).eval_every_steps, 0);  // off: any mode
  expect_rejected({"--eval-every-steps", "-1"}, "--eval-every-steps must be >= 0");
  for (const char* mode : {"async", "ssp"}) {
    expect_rejected({"--eval-every-steps", "10", "--mode", mode},
                    std::string("--mode ") + mode + " has none (each trainer steps on its own); use --mode sync, geo");
  }
  expect_rejected({"--eval-every-steps", "6", "--mode", "geo", "--geo-steps", "4"},
                  "--eval-every-steps 6 is not a multiple of --geo-steps 4");
}

}  // namespace
}  // namespace pstrain::config

namespace pstrain::config {
namespace {

// The message of the Error that resolving `flags` throws ("" if none).
std::string refusal(std::vector<std::string> flags) {
  try {
    resolve(std::move(flags));
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(TrainConfig, TableKeysExactTakesItsPolicyAndHashedIsTheDefault) {
  EXPECT_FALSE(resolve({}).table_keys.exact);
  const TrainConfig config =
      resolve({"--table-keys", "exact", "--admit-after", "3", "--admit-probability", "0.25", "--row-ttl-steps", "500"});
  EXPECT_TRUE(config.table_keys.exact);
  EXPECT_EQ(config.table_keys.admit_after, 3u);
  EXPECT_EQ(config.table_keys.admit_probability, 0.25);
  EXPECT_EQ(config.table_keys.ttl_steps, 500);
}

TEST(TrainConfig, TableKeysRefusalsNameTheProblem) {
  EXPECT_NE(refusal({"--table-keys", "exactly"}).find("--table-keys 'exactly' is not one of hashed, exact"),
            std::string::npos);
  EXPECT_NE(refusal({"--admit-after", "2"}).find("give them with --table-keys exact"), std::string::npos);
  EXPECT_NE(refusal({"--row-ttl-steps", "9"}).find("give them with --table-keys exact"), std::string::npos);
  EXPECT_EQ(refusal({"--admit-after", "1"}), "") << "the default, as config.ini writes it, is no rule given";
  EXPECT_NE(refusal({"--table-keys", "exact", "--admit-after", "0"}).find("--admit-after 0"), std::string::npos);
  EXPECT_NE(refusal({"--table-keys", "exact", "--admit-probability", "0"}).find("(0, 1]"), std::string::npos);
  EXPECT_NE(refusal({"--table-keys", "exact", "--row-ttl-steps", "-1"}).find("--row-ttl-steps"), std::string::npos);
  for (const char* mode : {"geo", "allreduce"}) {
    EXPECT_NE(refusal({"--table-keys", "exact", "--mode", mode}).find("keeps the rows on the trainers"),
              std::string::npos)
        << mode;
  }
  for (const char* mode : {"sync", "async", "ssp"}) {
    EXPECT_EQ(refusal({"--table-keys", "exact", "--mode", mode}), "") << mode;
  }
  EXPECT_NE(refusal({"--table-keys", "exact", "--init-from", "p"}).find("--init-from"), std::string::npos);
}

// The mode's traits were once read before the mode was: --table-exchange sparse passed under a mode without servers.
TEST(TrainConfig, TableExchangeSparseIsRefusedUnderTheModeGivenWithoutServers) {
  EXPECT_NE(refusal({"--table-exchange", "sparse", "--mode", "allreduce"}).find("needs parameter servers"),
            std::string::npos);
}

}  // namespace
}  // namespace pstrain::config
