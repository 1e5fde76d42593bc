// lib/inference: a saved model read back from a pass folder and scored (checked against a hand computation of
// the same dense model), the data/model fit check, predictions (top-k order, softmax), and .npy files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include "checkpoint/pass_folder.h"
#include "checkpoint/pass_model.h"
#include "compute/backend.h"
#include "core/error.h"
#include "data/npy.h"
#include "inference/evaluation.h"
#include "inference/evaluation_ranks.h"
#include "inference/npy_writer.h"
#include "inference/prediction.h"
#include "inference/saved_model.h"

namespace pstrain::inference {
namespace {

namespace fs = std::filesystem;

// A dense model 2 -> 3: logits = W x + b.
const std::vector<float> kWeight = {1, 0, 0, 1, 1, 1};  // {3, 2}
const std::vector<float> kBias = {0.0f, 0.5f, -2.0f};

class SavedModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    output_ = fs::temp_directory_path() / ("pstrain-inference-" + std::to_string(::getpid()));
    fs::remove_all(output_);
    fs::create_directories(output_);
  }
  void TearDown() override { fs::remove_all(output_); }

  fs::path write_pass(bool with_model) {
    std::vector<float> flat(kWeight);
    flat.insert(flat.end(), kBias.begin(), kBias.end());
    checkpoint::PassModelInfo info;
    info.source = "test";
    info.input = {2};
    info.classes = 3;
    const std::vector<nn::ParameterInfo> layout{{"fc.weight", {3, 2}, 0, 6}, {"fc.bias", {3}, 6, 3}};
    checkpoint::write_pass_folder(output_, 0, layout, flat, false, {}, {},
                                  with_model ? checkpoint::pass_model_files("fc dense units=3\n", info)
                                             : std::vector<std::pair<std::string, std::string>>{});
    return output_ / checkpoint::pass_folder_name(0);
  }

  static data::Samples samples() {
    data::Samples samples;
    samples.meta.sample_shape = {2};
    samples.meta.num_classes = 3;
    samples.features = {3, 1, 0, 2, 1, 1, -1, -1, 0.2f, 0.1f};
    samples.labels = {0, 1, 2, 1, 0};
    samples.meta.sample_count = 5;
    return samples;
  }

  fs::path output_;
};

TEST_F(SavedModelTest, EvaluationMatchesAHandComputationOfTheDenseModel) {
  const SavedModel saved = load_saved_model(write_pass(true), {}, nullptr);
  const auto backend = compute::make_cpu_backend();
  const auto model = nn::make_graph_model(*backend, saved.plan, 2);  // batches of 2: the last one is short
  model->set_parameters(saved.parameters);
  const data::Samples data = samples();
  std::vector<float> seen;
  const Evaluation evaluation = evaluate_samples(*model, data, 2, false, [&](std::size_t, std::size_t, auto logits) {
    seen.insert(seen.end(), logits.begin(), logits.end());
  });
  double loss = 0;
  std::size_t correct = 0;
  std::vector<std::vector<std::uint64_t>> confusion(3, std::vector<std::uint64_t>(3, 0));
  for (std::size_t s = 0; s < 5; ++s) {
    double logits[3];
    for (std::size_t u = 0; u < 3; ++u) {
      logits[u] = kWeight[u * 2] * data.features[s * 2] + kWeight[u * 2 + 1] * data.features[s * 2 + 1] + kBias[u];
      EXPECT_NEAR(seen[s * 3 + u], logits[u], 1e-6);
    }
    const std::size_t best = static_cast<std::size_t>(std::max_element(logits, logits + 3) - logits);
    ++confusion[static_cast<std::size_t>(data.labels[s])][best];
    correct += best == static_cast<std::size_t>(data.labels[s]);
    double total = 0;
    for (const double logit : logits) total += std::exp(logit);
    loss += std::log(total) - logits[data.labels[s]];
  }
  EXPECT_EQ(evaluation.samples, 5u);
  EXPECT_NEAR(evaluation.loss, loss / 5, 1e-6);
  EXPECT_DOUBLE_EQ(evaluation.accuracy, static_cast<double>(correct) / 5);
  EXPECT_EQ(evaluation.confusion, confusion);
  EXPECT_FALSE(evaluation.perplexity.has_value());
  const Evaluation language = evaluate_samples(*model, data, 2, true);
  ASSERT_TRUE(language.perplexity.has_value());
  EXPECT_NEAR(*language.perplexity, std::exp(loss / 5), 1e-5);
}

// What ranks of a shared evaluation do (evaluation_ranks.h): each sums its share, the sums are added up and
// finished. The short last batch stays the last batch of the last share.
TEST_F(SavedModelTest, SumsOfTheRanksSharesFinishAsOneProcessEvaluation) {
  const SavedModel saved = load_saved_model(write_pass(true), {}, nullptr);
  const auto backend = compute::make_cpu_backend();
  const auto model = nn::make_graph_model(*backend, saved.plan, 2);
  model->set_parameters(saved.parameters);
  const data::Samples data = samples();
  const Evaluation whole = evaluate_samples(*model, data, 2, false);
  EvaluationSums total = no_sums(3, false);
  for (int rank = 0; rank < 2; ++rank) {
    const SampleRange share = evaluator_share(data.labels.size(), 2, rank, 2);
    data::Samples part = data;
    part.features.assign(data.features.begin() + static_cast<std::ptrdiff_t>(share.first * 2),
                         data.features.begin() + static_cast<std::ptrdiff_t>((share.first + share.count) * 2));
    part.labels.assign(data.labels.begin() + static_cast<std::ptrdiff_t>(share.first),
                       data.labels.begin() + static_cast<std::ptrdiff_t>(share.first + share.count));
    const EvaluationSums sums = sum_evaluation(*model, part, 2, false);
    total.samples += sums.samples;
    total.correct += sums.correct;
    total.loss_sum += sums.loss_sum;
    for (std::size_t i = 0; i < sums.confusion.size(); ++i) total.confusion[i] += sums.confusion[i];
  }
  const Evaluation shared = finish_evaluation(total, 3, false);
  EXPECT_EQ(shared.samples, whole.samples);
  EXPECT_EQ(shared.accuracy, whole.accuracy);
  EXPECT_EQ(shared.confusion, whole.confusion);
  EXPECT_NEAR(shared.loss, whole.loss, 1e-12 * std::abs(whole.loss));
  EXPECT_THROW(finish_evaluation(no_sums(3, false), 3, false), Error);
}

// Shares are contiguous runs of whole batches, in rank order, covering every sample once, the batch counts
// within one of each other.
TEST(EvaluatorShare, ContiguousWholeBatchesCoveringEverySampleOnce) {
  for (const std::uint64_t samples : {0, 1, 5, 63, 64, 65, 2000}) {
    for (const std::size_t batch : {1, 7, 64}) {
      for (int ranks = 1; ranks <= 5; ++ranks) {
        std::uint64_t next = 0;
        std::uint64_t fewest = samples + 1;
        std::uint64_t most = 0;
        for (int rank = 0; rank < ranks; ++rank) {
          const SampleRange share = evaluator_share(samples, batch, rank, ranks);
          ASSERT_EQ(share.first, next) << samples << " " << batch << " " << rank << "/" << ranks;
          next += share.count;
          if (next < samples) {
            ASSERT_EQ(share.count % batch, 0u) << samples << " " << batch << " " << rank;
          }
          const std::uint64_t batches = (share.count + batch - 1) / batch;
          fewest = std::min(fewest, batches);
          most = std::max(most, batches);
        }
        EXPECT_EQ(next, samples) << batch << " " << ranks;
        EXPECT_LE(most - fewest, 1u) << samples << " " << batch << " " << ranks;
      }
    }
  }
}

TEST_F(SavedModelTest, OlderFolderNeedsTheModelFromFlagsAndTheData) {
  const fs::path folder = write_pass(false);
  EXPECT_THROW(load_saved_model(folder, {}, nullptr), Error);
  data::ShardMeta meta = samples().meta;
  try {
    load_saved_model(folder, {}, &meta);
    FAIL() << "an older folder without --model accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("--model"), std::string::npos) << error.what();
  }
  std::ofstream(output_ / "m.txt") << "fc dense units=3\n";
  ModelChoice choice;
  choice.model_file = output_ / "m.txt";
  const SavedModel saved = load_saved_model(folder, choice, &meta);
  EXPECT_EQ(saved.parameters, (std::vector<float>{1, 0, 0, 1, 1, 1, 0.0f, 0.5f, -2.0f}));
}

TEST_F(SavedModelTest, RejectsAnIncompleteFolderAndDataOfAnotherShape) {
  const fs::path folder = write_pass(true);
  const SavedModel saved = load_saved_model(folder, {}, nullptr);
  data::ShardMeta other = samples().meta;
  other.sample_shape = {28, 28};
  try {
    check_data_fits(saved, other, "test.h5");
    FAIL() << "28x28 samples accepted by a model of 2 inputs";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("28x28"), std::string::npos) << error.what();
  }
  fs::remove(folder / "done");
  try {
    load_saved_model(folder, {}, nullptr);
    FAIL() << "a folder without done accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("incomplete"), std::string::npos) << error.what();
  }
}

TEST(Prediction, CsvListsTheTopKMostProbableFirstWithQuotedWords) {
  PredictionTable table(false, 4, 2, {"a", "b,c", "\"q\"", "d"});
  const std::vector<float> logits = {0.0f, 2.0f, 1.0f, 2.0f};  // a tie: the lower id first
  table.add(logits, std::vector<std::int32_t>{3}, 1);
  const std::vector<float> p = softmax(logits);
  char expected[200];
  std::snprintf(expected, sizeof expected, "sample,label,id1,p1,id2,p2,word1,word2\n0,3,1,%.9g,3,%.9g,\"b,c\",\"d\"\n",
                p[1], p[3]);
  EXPECT_EQ(table.bytes(), expected);
  double total = 0;
  for (const float value : p) total += value;
  EXPECT_NEAR(total, 1.0, 1e-6);
  EXPECT_NEAR(p[1], std::exp(2.0) / (1 + 2 * std::exp(2.0) + std::exp(1.0)), 1e-7);
}

TEST(NpyWriter, TheDataReaderReadsBackWhatPredictWritesAndRefusesFortranOrderAndTruncation) {
  const fs::path path = fs::temp_directory_path() / ("pstrain-npy-" + std::to_string(::getpid()) + ".npy");
  const std::vector<float> values = {1.5f, -2, 3, 4, 5, 6};
  const std::string bytes = npy_bytes({2, 3}, values);
  EXPECT_EQ((bytes.size() - values.size() * 4) % 64, 0u);  // the header is padded to 64 bytes
  std::ofstream(path, std::ios::binary) << bytes;
  const data::NpyArray array = data::read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(data::npy_features(array, path.string()), values);
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << fortran;
  EXPECT_THROW(data::read_npy(path), Error);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 1);
  EXPECT_THROW(data::read_npy(path), Error);
  fs::remove(path);
}

}  // namespace
}  // namespace pstrain::inference
