#pragma once
// Small graphs that exercise one layer type each, between layers with parameters (so that the gradient the
// layer passes to its input is checked too): the finite-difference tests (test_layer_gradients.cc) and the
// GPU-against-CPU tests (tests/unit/gpu/test_gpu_models.cc) run the same cases.
#include <string>
#include <vector>

#include "backend_test_util.h"
#include "nn/shape.h"

namespace pstrain::nn::testing {

struct LayerCase {
  std::string name;
  std::string text;  // the model description
  Shape input;
  bool ids = false;  // integer ids in [0, 6) instead of real features
  bool training_loss = false;
};

inline std::vector<LayerCase> layer_cases() {
  return {
      {"dense_without_bias", "a dense units=5 bias=false\nb tanh\nc dense units=3\n", {4}},
      {"conv2d_strided_unpadded",
       "a conv2d filters=3 kernel=3 stride=2 padding=0\nb flatten\nc dense units=3\n",
       {7, 7, 2}},
      {"conv2d_without_bias", "a conv2d filters=2 kernel=3 bias=false\nb flatten\nc dense units=3\n", {4, 4, 2}},
      {"maxpool_overlapping",
       "a conv2d filters=2\nb maxpool window=3 stride=1\nc flatten\nd dense units=3\n",
       {5, 5, 1}},
      {"avgpool", "a conv2d filters=3\nb avgpool window=2\nc flatten\nd dense units=3\n", {5, 4, 2}},
      {"global_avgpool", "a conv2d filters=4\nb global_avgpool\nc dense units=3\n", {4, 5, 2}},
      {"batchnorm_on_images",
       "a conv2d filters=3 bias=false\nb batchnorm\nc relu\nd flatten\ne dense units=3\n",
       {4, 4, 2},
       false,
       true},
      {"batchnorm_on_vectors",
       "a dense units=6 bias=false\nb batchnorm momentum=0.5\nc tanh\nd dense units=3\n",
       {5},
       false,
       true},
      {"dropout", "a dense units=8\nb dropout rate=0.3\nc dense units=3\n", {5}, false, true},
      {"sigmoid_and_scale", "a dense units=4\nb sigmoid\nc scale factor=-0.5\nd dense units=3\n", {3}},
      {"residual_add",
       "a conv2d filters=3\nb relu\nc conv2d filters=3\nd tanh\ne add inputs=b,d\nf flatten\ng dense units=3\n",
       {4, 4, 1}},
      {"add_of_the_data", "a conv2d filters=1\nb add inputs=input,a\nc flatten\nd dense units=3\n", {3, 3, 1}},
      // An add read only by another add, and layers read by nothing else: every gradient but the last add's is
      // that add's buffer, passed through (GraphModel's pass-through gradients).
      {"chained_adds",
       "a dense units=3\nb dense units=3 inputs=input\nc add inputs=a,b\nd dense units=3 inputs=input\n"
       "e add inputs=c,d\nf tanh\ng dense units=3\n",
       {5}},
      {"concat_of_branches",
       "a conv2d filters=2\nb conv2d filters=3 inputs=input\nc concat inputs=a,b\nd relu\ne flatten\nf dense units=3\n",
       {3, 4, 2}},
      {"concat_of_vectors",
       "a dense units=3\nb dense units=2 inputs=input\nc concat inputs=b,a\nd dense units=3\n",
       {4}},
      {"embedding", "a embedding vocab=6 dim=3\nb flatten\nc dense units=3\n", {4}, true},
      // The CTR interactions over dense layers' outputs, so that the GPU tests run them too (embedding_bag, their
      // usual input, is CPU-only; test_ctr_gradients.cc checks them over it).
      {"dot_interaction",
       "a dense units=3\nb dense units=3 inputs=input\nc dense units=3 inputs=input\n"
       "x dot_interaction inputs=a,b,c\nd dense units=3\n",
       {4}},
      {"fm", "a dense units=3\nb tanh\nc dense units=3 inputs=input\nf fm inputs=b,c\ng dense units=3\n", {5}},
  };
}

// A batch of inputs for a case: real features in [-1, 1], or integer ids in [0, 6) for embeddings.
inline std::vector<float> layer_case_features(const LayerCase& layer, std::size_t batch) {
  std::vector<float> features = compute::testing::random_floats(batch * element_count(layer.input), 43, -1.0f, 1.0f);
  if (layer.ids) {
    for (std::size_t i = 0; i < features.size(); ++i) features[i] = static_cast<float>((i * 7 + 3) % 6);
  }
  return features;
}

}  // namespace pstrain::nn::testing
