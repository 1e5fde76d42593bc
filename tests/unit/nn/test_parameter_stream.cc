// Streaming (nn/parameter_stream.h) against an exchange that takes the contract literally: before a training
// step every parameter is NaN, before_forward puts a range's true values in, after_backward checks that the
// range's gradient is already final and overwrites the range's values with NaN again. A layer that read a value
// before asking, or after reporting it, would turn the loss or a gradient into NaN; the streamed step must give
// the bits of an unstreamed one, and report every element exactly once.
#include <cmath>
#include <limits>
#include <vector>

#include "backend_test_util.h"
#include "model_test_util.h"
#include "nn/model.h"
#include "nn/parameter_stream.h"

namespace pstrain::nn {
namespace {

using compute::testing::random_floats;
using testing::gradients_of;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class LiteralExchange final : public ParameterStream {
 public:
  LiteralExchange(Model& model, std::vector<float> values, std::vector<float> final_gradient)
      : model_(model), values_(std::move(values)), final_gradient_(std::move(final_gradient)) {}

  void begin_step() {
    std::fill(model_.host_parameters().begin(), model_.host_parameters().end(), kNaN);
    asked_.assign(values_.size(), 0);
    reported_.assign(values_.size(), 0);
  }
  void before_forward(std::size_t offset, std::size_t size) override {
    ASSERT_LE(offset + size, values_.size());
    for (std::size_t i = offset; i < offset + size; ++i) {
      model_.host_parameters()[i] = values_[i];
      ++asked_[i];
    }
  }
  void after_backward(std::size_t offset, std::size_t size) override {
    ASSERT_LE(offset + size, values_.size());
    const std::span<const float> gradient = model_.host_gradients();
    for (std::size_t i = offset; i < offset + size; ++i) {
      ASSERT_EQ(gradient[i], final_gradient_[i]) << "element " << i << " reported before its gradient was final";
      model_.host_parameters()[i] = kNaN;
      ++reported_[i];
    }
    ++reports_;
  }

  const std::vector<int>& asked() const { return asked_; }
  const std::vector<int>& reported() const { return reported_; }
  int reports() const { return reports_; }

 private:
  Model& model_;
  std::vector<float> values_;
  std::vector<float> final_gradient_;
  std::vector<int> asked_;
  std::vector<int> reported_;
  int reports_ = 0;
};

class ParameterStreamTest : public compute::testing::BackendTest {
 protected:
  // One unstreamed step for the reference, then two streamed steps (the second after the stream's NaNs).
  void expect_streamed_step_matches(Model& model, std::size_t batch) {
    model.initialize(7);
    const std::vector<float> values = testing::parameters_of(model);
    const std::vector<float> features = random_floats(batch * model.input_size(), 3);
    std::vector<std::int32_t> labels(batch);
    for (std::size_t i = 0; i < batch; ++i) labels[i] = static_cast<std::int32_t>(i % model.num_classes());
    const BatchResult reference = model.train_batch(features, labels, batch);
    const std::vector<float> gradient = gradients_of(model);

    LiteralExchange exchange(model, values, gradient);
    ASSERT_TRUE(model.can_stream_parameters());
    model.set_parameter_stream(&exchange);
    for (int step = 0; step < 2; ++step) {
      exchange.begin_step();
      const BatchResult streamed = model.train_batch(features, labels, batch);
      EXPECT_EQ(streamed.loss_sum, reference.loss_sum) << "step " << step;
      EXPECT_EQ(gradients_of(model), gradient) << "step " << step;
      EXPECT_EQ(exchange.asked(), std::vector<int>(values.size(), 1)) << "each element asked for once";
      EXPECT_EQ(exchange.reported(), std::vector<int>(values.size(), 1)) << "each element reported once";
    }
    reports_ = exchange.reports();
    model.set_parameter_stream(nullptr);
    model.set_parameters(values);
    EXPECT_EQ(model.train_batch(features, labels, batch).loss_sum, reference.loss_sum) << "after detaching";
  }
  int reports_ = 0;
};

TEST_F(ParameterStreamTest, MlpStreamsTheBitsOfAnUnstreamedStepAndReportsItsFirstWeightInBlocks) {
  auto model = make_mlp(*backend_, {.input_size = 784, .hidden = {256, 128}, .num_classes = 10, .max_batch = 64});
  expect_streamed_step_matches(*model, 64);
  // Whole parameters would make 6 reports a step; fc1.weight (256 x 784) goes out in several blocks.
  EXPECT_GT(reports_, 2 * 6);
}

TEST_F(ParameterStreamTest, CnnStreamsTheBitsOfAnUnstreamedStep) {
  auto model = make_cnn(*backend_, {});
  expect_streamed_step_matches(*model, 16);
}

// A batch longer than the BLAS's inner blocking of the summed dimension (a few hundred): each block of dW must
// still sum the batch as the whole product does.
TEST_F(ParameterStreamTest, MlpWithALargeBatchStreamsTheBitsOfAnUnstreamedStep) {
  auto model = make_mlp(*backend_, {.input_size = 784, .hidden = {256, 128}, .num_classes = 10, .max_batch = 1000});
  expect_streamed_step_matches(*model, 1000);
}

TEST_F(ParameterStreamTest, SmallMlpWithAnOddBatchStreamsTheBitsOfAnUnstreamedStep) {
  auto model = make_mlp(*backend_, {.input_size = 5, .hidden = {3}, .num_classes = 2, .max_batch = 8});
  expect_streamed_step_matches(*model, 7);
}

}  // namespace
}  // namespace pstrain::nn
