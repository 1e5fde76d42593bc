// Every layer type's backward pass against central finite differences of the mean batch loss, each inside a
// small graph: the layer under test sits between layers with parameters, so that both its own parameter
// gradients and the gradient it passes to its input are checked (a wrong input gradient spoils the gradients of
// every parameter below it). Layers that behave differently in training (batch norm, dropout) are
// differentiated in training mode.
#include <cmath>

#include "backend_test_util.h"
#include "layer_cases.h"
#include "model_test_util.h"
#include "nn/graph_model.h"
#include "nn/model_plan.h"

namespace pstrain::nn {
namespace {

using compute::testing::random_floats;
using testing::layer_case_features;
using testing::layer_cases;
using testing::LayerCase;

class LayerGradientTest : public compute::testing::BackendTest, public ::testing::WithParamInterface<LayerCase> {};

TEST_P(LayerGradientTest, ParameterGradientsMatchFiniteDifferences) {
  const LayerCase& layer = GetParam();
  const std::size_t classes = 3;
  const std::size_t batch = 4;
  auto model =
      make_graph_model(*backend_, plan_model(parse_model_text(layer.text, layer.name), layer.input, classes), batch);
  model->initialize(5);
  model->set_step_key(77);
  testing::GradientCheck check(*model, layer_case_features(layer, batch), {0, 2, 1, 2}, layer.training_loss);
  testing::expect_gradients_match_finite_differences(*model, check);
}

INSTANTIATE_TEST_SUITE_P(All, LayerGradientTest, ::testing::ValuesIn(layer_cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace pstrain::nn
