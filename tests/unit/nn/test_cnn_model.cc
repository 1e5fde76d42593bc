// The CNN's contract apart from gradient values: parameter layout, the meaning of that layout (a naive forward
// pass written here), deterministic initialisation, batch limits, spec checks, and that it learns.
#include <algorithm>
#include <cmath>
#include <random>

#include "backend_test_util.h"
#include "core/error.h"
#include "model_test_util.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Activation;
using compute::testing::random_floats;
using testing::parameters_of;

class CnnModelTest : public compute::testing::BackendTest {};

TEST_F(CnnModelTest, DefaultSpecLayoutIsConvThenFcWeightThenBias) {
  CnnSpec spec;  // 28x28x1, conv {32, 64}, kernel 3, hidden {128}, 10 classes
  spec.max_batch = 8;
  auto model = make_cnn(*backend_, spec);
  // 28x28 -> pool 14x14 -> pool 7x7, so fc1 sees 7 * 7 * 64 = 3136 inputs.
  testing::expect_packed_layout(*model,
                                {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias",
                                 "fc2.weight", "fc2.bias"},
                                {{32, 3, 3, 1}, {32}, {64, 3, 3, 32}, {64}, {128, 3136}, {128}, {10, 128}, {10}});
  EXPECT_EQ(model->parameter_count(), 421642u);
  EXPECT_EQ(model->input_size(), 784u);
  EXPECT_EQ(model->num_classes(), 10u);
}

TEST_F(CnnModelTest, OddSizesFloorAtEachPoolAndNoHiddenLayerIsAllowed) {
  // 7x5 -> pool 3x2 -> pool 1x1; fc1 goes straight to the logits.
  auto model = make_cnn(*backend_, {.height = 7,
                                    .width = 5,
                                    .channels = 3,
                                    .conv_filters = {2, 4},
                                    .kernel_size = 5,
                                    .hidden = {},
                                    .num_classes = 2,
                                    .max_batch = 2});
  const auto& parameters = model->parameters();
  ASSERT_EQ(parameters.size(), 6u);
  EXPECT_EQ(parameters[0].shape, (std::vector<std::size_t>{2, 5, 5, 3}));
  EXPECT_EQ(parameters[2].shape, (std::vector<std::size_t>{4, 5, 5, 2}));
  EXPECT_EQ(parameters[4].name, "fc1.weight");
  EXPECT_EQ(parameters[4].shape, (std::vector<std::size_t>{2, 4}));
  model->initialize(1);
  const auto features = random_floats(2 * model->input_size(), 3);
  EXPECT_TRUE(std::isfinite(model->train_batch(features, std::vector<std::int32_t>{0, 1}, 2).loss_sum));
}

// The network straight from model.h's description, in double: 'same' convolution with weight {f, ky, kx, c},
// activation, 2x2/2 max-pool, flatten in (h, w, c) order, dense layers with weight {out, in}.
double reference_mean_loss(const CnnSpec& spec, const std::vector<ParameterInfo>& layout,
                           const std::vector<float>& parameters, const std::vector<float>& features,
                           const std::vector<std::int32_t>& labels) {
  auto activate = [&](double v) {
    switch (spec.activation) {
      case Activation::kRelu: return v > 0 ? v : 0.0;
      case Activation::kTanh: return std::tanh(v);
      case Activation::kSigmoid: return 1 / (1 + std::exp(-v));
    }
    return v;
  };
  const std::size_t batch = labels.size();
  double loss = 0;
  for (std::size_t n = 0; n < batch; ++n) {
    int height = static_cast<int>(spec.height), width = static_cast<int>(spec.width);
    int channels = static_cast<int>(spec.channels);
    const int kernel = static_cast<int>(spec.kernel_size), pad = kernel / 2;
    const std::size_t image_size = spec.height * spec.width * spec.channels;
    std::vector<double> image(features.begin() + static_cast<std::ptrdiff_t>(n * image_size),
                              features.begin() + static_cast<std::ptrdiff_t>((n + 1) * image_size));
    std::size_t parameter = 0;
    for (std::size_t filters_size : spec.conv_filters) {
      const int filters = static_cast<int>(filters_size);
      const float* w = parameters.data() + layout[parameter].offset;
      const float* b = parameters.data() + layout[parameter + 1].offset;
      parameter += 2;
      std::vector<double> activated(static_cast<std::size_t>(height) * width * filters);
      for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
          for (int f = 0; f < filters; ++f) {
            double sum = b[f];
            for (int ky = 0; ky < kernel; ++ky) {
              for (int kx = 0; kx < kernel; ++kx) {
                const int iy = y + ky - pad, ix = x + kx - pad;
                if (iy < 0 || iy >= height || ix < 0 || ix >= width) continue;
                for (int c = 0; c < channels; ++c) {
                  sum += w[((f * kernel + ky) * kernel + kx) * channels + c] * image[(iy * width + ix) * channels + c];
                }
              }
            }
            activated[(y * width + x) * filters + f] = activate(sum);
          }
        }
      }
      const int pooled_height = height / 2, pooled_width = width / 2;
      std::vector<double> pooled(static_cast<std::size_t>(pooled_height) * pooled_width * filters);
      for (int y = 0; y < pooled_height; ++y) {
        for (int x = 0; x < pooled_width; ++x) {
          for (int f = 0; f < filters; ++f) {
            double best = -INFINITY;
            for (int wy = 0; wy < 2; ++wy) {
              for (int wx = 0; wx < 2; ++wx) {
                best = std::max(best, activated[((2 * y + wy) * width + 2 * x + wx) * filters + f]);
              }
            }
            pooled[(y * pooled_width + x) * filters + f] = best;
          }
        }
      }
      image = std::move(pooled);
      height = pooled_height;
      width = pooled_width;
      channels = filters;
    }
    for (; parameter < layout.size(); parameter += 2) {
      const std::size_t outputs = layout[parameter].shape[0], inputs = layout[parameter].shape[1];
      EXPECT_EQ(inputs, image.size());
      const float* w = parameters.data() + layout[parameter].offset;
      const float* b = parameters.data() + layout[parameter + 1].offset;
      std::vector<double> out(outputs);
      for (std::size_t o = 0; o < outputs; ++o) {
        double sum = b[o];
        for (std::size_t i = 0; i < inputs; ++i) sum += w[o * inputs + i] * image[i];
        out[o] = parameter + 2 < layout.size() ? activate(sum) : sum;
      }
      image = std::move(out);
    }
    const double max = *std::max_element(image.begin(), image.end());
    double exp_sum = 0;
    for (double logit : image) exp_sum += std::exp(logit - max);
    loss += std::log(exp_sum) + max - image[static_cast<std::size_t>(labels[n])];
  }
  return loss / static_cast<double>(batch);
}

TEST_F(CnnModelTest, ForwardMatchesANaiveReferenceOfTheDocumentedNetwork) {
  for (Activation activation : {Activation::kRelu, Activation::kTanh}) {
    const CnnSpec spec{.height = 9,
                       .width = 6,
                       .channels = 2,
                       .conv_filters = {3, 5},
                       .kernel_size = 3,
                       .hidden = {7},
                       .num_classes = 4,
                       .activation = activation,
                       .max_batch = 5};
    auto model = make_cnn(*backend_, spec);
    const auto parameters = random_floats(model->parameter_count(), 81, -0.5f, 0.5f);  // biases too
    model->set_parameters(parameters);
    const auto features = random_floats(5 * model->input_size(), 82);
    const std::vector<std::int32_t> labels{3, 0, 1, 2, 1};
    const double loss = model->evaluate_batch(features, labels, 5).loss_sum / 5;
    EXPECT_NEAR(loss, reference_mean_loss(spec, model->parameters(), parameters, features, labels), 1e-5)
        << compute::to_string(activation);
  }
}

TEST_F(CnnModelTest, SamplesInABatchAreIndependent) {
  // The loss of a batch is the sum of its samples' losses: no sample's pixels leak into another's windows.
  const CnnSpec spec{.height = 6,
                     .width = 5,
                     .channels = 2,
                     .conv_filters = {3, 2},
                     .hidden = {4},
                     .num_classes = 3,
                     .max_batch = 4};
  auto model = make_cnn(*backend_, spec);
  model->initialize(21);
  const auto features = random_floats(4 * model->input_size(), 22);
  const std::vector<std::int32_t> labels{2, 0, 1, 1};
  const BatchResult whole = model->evaluate_batch(features, labels, 4);
  double sum = 0;
  std::size_t correct = 0;
  for (std::size_t n = 0; n < 4; ++n) {
    const std::span<const float> sample(features.data() + n * model->input_size(), model->input_size());
    const BatchResult one = model->evaluate_batch(sample, std::span(labels).subspan(n, 1), 1);
    sum += one.loss_sum;
    correct += one.correct;
  }
  EXPECT_NEAR(whole.loss_sum, sum, 1e-5);
  EXPECT_EQ(whole.correct, correct);
}

TEST_F(CnnModelTest, InitializationIsDeterministicFromTheSeed) {
  CnnSpec spec;
  spec.max_batch = 2;
  testing::expect_initialization_deterministic(*make_cnn(*backend_, spec), *make_cnn(*backend_, spec));
}

TEST_F(CnnModelTest, InitializationMatchesTheDocumentedRecipe) {
  // A convolution's fan-in is k*k*C and its fan-out k*k*filters.
  const CnnSpec spec{.height = 4,
                     .width = 4,
                     .channels = 2,
                     .conv_filters = {3},
                     .kernel_size = 3,
                     .hidden = {},
                     .num_classes = 2,
                     .activation = Activation::kTanh};
  auto model = make_cnn(*backend_, spec);
  model->initialize(7);
  testing::RecipeParameters expected(7);
  expected.add_layer(3 * 3 * 3 * 2, std::sqrt(6.0 / (9 * 2 + 9 * 3)), 3);  // conv1
  expected.add_layer(2 * 12, std::sqrt(6.0 / (12 + 2)), 2);                // fc1: 2x2x3 -> 2
  EXPECT_EQ(parameters_of(*model), expected.values());
}

TEST_F(CnnModelTest, ReluWeightsSpanTheKaimingLimitAndBiasesStartAtZero) {
  CnnSpec spec;
  spec.max_batch = 2;
  auto model = make_cnn(*backend_, spec);
  model->initialize(5);
  testing::expect_weights_span_their_limit(*model, [](const ParameterInfo& info) {
    const double fan_in = static_cast<double>(info.size / info.shape[0]);  // k*k*C, or the dense inputs
    return std::sqrt(6 / fan_in);
  });
}

TEST_F(CnnModelTest, HostSpansAreTheFlatBuffers) {
  auto model = make_cnn(*backend_, {.height = 4,
                                    .width = 4,
                                    .channels = 1,
                                    .conv_filters = {2},
                                    .hidden = {},
                                    .num_classes = 2,
                                    .max_batch = 2});
  ASSERT_EQ(model->host_parameters().size(), model->parameter_count());  // the CPU backend is host accessible
  ASSERT_EQ(model->host_gradients().size(), model->parameter_count());
  EXPECT_EQ(model->host_parameters().data(), model->backend_parameters());
  EXPECT_EQ(model->host_gradients().data(), model->backend_gradients());
  const auto values = random_floats(model->parameter_count(), 51);
  model->set_parameters(values);
  EXPECT_EQ(parameters_of(*model), values);
  EXPECT_TRUE(std::equal(values.begin(), values.end(), model->host_parameters().begin()));
}

TEST_F(CnnModelTest, BatchLargerThanMaxBatchIsAUsageError) {
  auto model = make_cnn(*backend_, {.height = 4,
                                    .width = 4,
                                    .channels = 1,
                                    .conv_filters = {2},
                                    .hidden = {3},
                                    .num_classes = 2,
                                    .max_batch = 4});
  model->initialize(1);
  testing::expect_oversized_batch_is_a_usage_error(*model, 4);
}

TEST_F(CnnModelTest, InvalidSpecsAreUsageErrorsThatNameTheProblem) {
  const CnnSpec good{.height = 8,
                     .width = 8,
                     .channels = 1,
                     .conv_filters = {2, 3},
                     .kernel_size = 3,
                     .hidden = {4},
                     .num_classes = 3,
                     .max_batch = 4};
  EXPECT_NO_THROW(make_cnn(*backend_, good));
  struct Case {
    CnnSpec spec;
    std::string message_part;
  };
  std::vector<Case> cases;
  auto add = [&](auto change, std::string message_part) {
    CnnSpec spec = good;
    change(spec);
    cases.push_back({spec, std::move(message_part)});
  };
  add([](CnnSpec& s) { s.kernel_size = 2; }, "odd");
  add([](CnnSpec& s) { s.kernel_size = 0; }, "odd");
  add([](CnnSpec& s) { s.conv_filters = {2, 0}; }, "conv2");
  add([](CnnSpec& s) { s.conv_filters = {}; }, "at least one convolution");
  add([](CnnSpec& s) { s.hidden = {4, 0}; }, "hidden");
  add([](CnnSpec& s) { s.height = 0; }, "height");
  add([](CnnSpec& s) { s.channels = 0; }, "channels");
  add([](CnnSpec& s) { s.num_classes = 1; }, "classes");
  add([](CnnSpec& s) { s.max_batch = 0; }, "batch");
  // 8 -> 4 -> 2 -> 1 fits three pools; a fourth would pool a 1x1 image.
  add([](CnnSpec& s) { s.conv_filters = {2, 2, 2, 2}; }, "too small");
  add([](CnnSpec& s) { s.width = 3; }, "too small");  // 3 -> 1, then conv2 has nothing to pool
  add([](CnnSpec& s) { s.max_batch = std::size_t{1} << 40; }, "too large");
  CnnSpec just_fits = good;
  just_fits.conv_filters = {2, 2, 2};
  EXPECT_NO_THROW(make_cnn(*backend_, just_fits));

  for (const Case& bad : cases) {
    try {
      make_cnn(*backend_, bad.spec);
      ADD_FAILURE() << "expected an error mentioning '" << bad.message_part << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage) << error.what();
      EXPECT_NE(std::string(error.what()).find(bad.message_part), std::string::npos) << error.what();
    }
  }
}

TEST_F(CnnModelTest, EvaluateMatchesTrainAndLeavesGradientsAlone) {
  auto model = make_cnn(*backend_, {.height = 6,
                                    .width = 6,
                                    .channels = 2,
                                    .conv_filters = {3},
                                    .hidden = {5},
                                    .num_classes = 3,
                                    .max_batch = 8});
  model->initialize(9);
  testing::expect_evaluate_matches_train_and_leaves_gradients_alone(*model);
}

// A translation-invariant task an MLP on so few samples would find hard: where a short bar lies is random, its
// orientation (horizontal, vertical, or a 2x2 blob) is the class.
struct Images {
  std::vector<float> features;
  std::vector<std::int32_t> labels;
};

Images bar_images(std::size_t count, std::uint64_t seed) {
  constexpr int kSide = 8;
  std::mt19937_64 engine(seed);
  auto below = [&](int n) { return static_cast<int>(engine() % static_cast<std::uint64_t>(n)); };
  const auto noise = random_floats(count * kSide * kSide, seed + 1, -0.3f, 0.3f);
  Images images;
  images.features = noise;
  for (std::size_t i = 0; i < count; ++i) {
    const int label = static_cast<int>(i % 3);
    float* image = images.features.data() + i * kSide * kSide;
    const int y = below(kSide - 3), x = below(kSide - 3);
    for (int step = 0; step < 4; ++step) {
      switch (label) {
        case 0: image[y * kSide + x + step] += 1.0f; break;             // horizontal, 4 long
        case 1: image[(y + step) * kSide + x] += 1.0f; break;           // vertical, 4 long
        default: image[(y + step / 2) * kSide + x + step % 2] += 1.0f;  // 2x2 blob
      }
    }
    images.labels.push_back(label);
  }
  return images;
}

TEST_F(CnnModelTest, SgdLearnsAnImageTask) {
  constexpr std::size_t kTrain = 96, kBatch = 32;
  auto model = make_cnn(*backend_, {.height = 8,
                                    .width = 8,
                                    .channels = 1,
                                    .conv_filters = {6, 8},
                                    .hidden = {16},
                                    .num_classes = 3,
                                    .max_batch = kBatch});
  model->initialize(13);
  const Images train = bar_images(kTrain, 14);
  const Images held_out = bar_images(kTrain, 15);
  auto accuracy = [&](const Images& images) {
    std::size_t correct = 0;
    for (std::size_t start = 0; start < kTrain; start += kBatch) {
      correct += model
                     ->evaluate_batch(std::span(images.features).subspan(start * 64, kBatch * 64),
                                      std::span(images.labels).subspan(start, kBatch), kBatch)
                     .correct;
    }
    return static_cast<double>(correct) / kTrain;
  };
  EXPECT_LT(accuracy(train), 0.6);  // untrained: about chance (1/3)

  // Plain minibatch SGD in place on the host spans of the flat buffers, as a CPU trainer does.
  const std::span<float> parameters = model->host_parameters();
  const std::span<const float> gradients = model->host_gradients();
  for (int epoch = 0; epoch < 100; ++epoch) {
    for (std::size_t start = 0; start < kTrain; start += kBatch) {
      model->train_batch(std::span(train.features).subspan(start * 64, kBatch * 64),
                         std::span(train.labels).subspan(start, kBatch), kBatch);
      for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i] -= 0.1f * gradients[i];
    }
  }
  EXPECT_GE(accuracy(train), 0.95);
  EXPECT_GE(accuracy(held_out), 0.8);  // it learnt the shapes, not the samples
}

}  // namespace
}  // namespace pstrain::nn
