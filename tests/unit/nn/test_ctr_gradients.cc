// The click-through-rate layers (embedding_bag, dot_interaction, fm) and loss=bce inside DLRM- and DeepFM-shaped
// graphs, against central finite differences of the mean batch loss: the embedding tables sit below the
// interactions, so a wrong gradient from dot_interaction or fm to its inputs spoils the tables' gradients.
#include <gtest/gtest.h>

#include "backend_test_util.h"
#include "core/error.h"
#include "ctr_test_util.h"
#include "model_test_util.h"
#include "nn/graph_model.h"
#include "nn/loss.h"
#include "nn/model_plan.h"

namespace pstrain::nn {
namespace {

using compute::testing::random_floats;

struct CtrCase {
  std::string name;
  std::string text;
};

void PrintTo(const CtrCase& ctr_case, std::ostream* out) {
  *out << ctr_case.name;
}

class CtrGradientTest : public compute::testing::BackendTest, public ::testing::WithParamInterface<CtrCase> {};

TEST_P(CtrGradientTest, ParameterGradientsMatchFiniteDifferences) {
  const std::size_t batch = 5;
  auto model =
      make_graph_model(*backend_, plan_model(parse_model_text(GetParam().text, GetParam().name), {3}, 2), batch);
  ASSERT_EQ(model->categorical_fields(), 3u);
  model->initialize(5);
  const core::JaggedIds fields = testing::random_fields(3, batch, 11);
  model->set_categorical(&fields);
  testing::GradientCheck check(*model, random_floats(batch * 3, 43), {0, 1, 1, 0, 1});
  testing::expect_gradients_match_finite_differences(*model, check);
}

INSTANTIATE_TEST_SUITE_P(
    Ctr, CtrGradientTest,
    ::testing::Values(
        // DLRM: a bottom MLP on the dense features, a table per field and a shared one, their dot products.
        CtrCase{"dlrm",
                "bottom dense units=4\n"
                "e0 embedding_bag field=0 rows=7 dim=4\n"
                "e12 embedding_bag fields=1,2 rows=5 dim=4 pooling=mean\n"
                "x dot_interaction inputs=bottom,e0,e12\n"
                "top dense units=3\nact tanh\nlogit dense units=1 loss=bce\n"},
        // DeepFM: wide weights (tables of dim 1), the FM term and a deep part over the same field vectors.
        CtrCase{"deepfm",
                "w0 embedding_bag field=0 rows=6 dim=1 seed=9\n"
                "w2 embedding_bag field=2 rows=6 dim=1\n"
                "v embedding_bag fields=0-1 rows=9 dim=3\n"
                "u embedding_bag field=2 rows=4 dim=3 pooling=mean\n"
                "f fm inputs=v,u\n"
                "flat flatten inputs=v\ndeep dense units=4\nact tanh\nd dense units=1\n"
                "dense_part dense units=1 inputs=input\n"
                "logit add inputs=w0,w2,f,d,dense_part loss=bce\n"}),
    [](const auto& info) { return info.param.name; });

// Evaluation reads the fields too, returns one logit per sample (what the AUC ranks), and its loss is the mean
// binary cross-entropy of those logits.
class CtrModelTest : public compute::testing::BackendTest {};

TEST_F(CtrModelTest, EvaluationReturnsOneLogitPerSampleWhoseBceIsTheLoss) {
  const std::size_t batch = 4;
  const std::string text = "e embedding_bag fields=0-2 rows=8 dim=2\nx fm\no dense units=1 loss=bce\n";
  auto model = make_graph_model(*backend_, plan_model(parse_model_text(text, "m.model"), {3}, 2), batch);
  model->initialize(3);
  EXPECT_EQ(model->output_size(), 1u);
  const core::JaggedIds fields = testing::random_fields(3, batch, 12);
  const auto features = random_floats(batch * 3, 1);
  const std::vector<std::int32_t> labels{1, 0, 0, 1};
  EXPECT_THROW(model->evaluate_batch(features, labels, batch), Error);  // no fields given yet
  model->set_categorical(&fields);
  std::vector<float> logits(batch);
  const BatchResult result = model->evaluate_batch_logits(features, labels, batch, logits);
  double expected = 0;
  for (std::size_t i = 0; i < batch; ++i) expected += BinaryCrossEntropy::loss(logits[i], labels[i]);
  EXPECT_NEAR(result.loss_sum, expected, 1e-6);
  EXPECT_EQ(result.count, batch);
  EXPECT_EQ(model->train_batch(features, labels, batch).loss_sum, result.loss_sum);
}

}  // namespace
}  // namespace pstrain::nn
