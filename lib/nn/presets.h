#pragma once
// The built-in models, written in the model-file format (model_spec.h) from their options: `--model mlp`,
// `cnn` and `resnet` are exactly these texts, and `pstrain --describe-model` prints them.
//   mlp     flatten, then dense layers fc1..fcN with the activation between them
//   cnn     conv blocks (conv, 2x2 max-pool, activation: pooling before a monotone activation computes the
//           same function on a quarter of the elements), flatten, dense fc1..fcN
//   resnet  the shape of the DAWNBench ResNet-9 of the seed's sweep article: a prep conv, three stages each
//           ending in a 2x2 max-pool, residual blocks of two convs after the first and the third stage, global
//           average pooling, a linear head without bias scaled by 0.125; widths 64, 128, 256, 512 times `width`;
//           batch norm after every conv (or, without it, conv biases instead)
//   nplm    the neural probabilistic language model of Bengio et al. 2003 (JMLR 3:1137): the N-1 context ids
//           through one shared embedding table (`embedding_dim` m), concatenated (a flatten of {N-1, m}), an
//           optional tanh hidden layer (`hidden`: none or one width h), a dense output over the vocabulary
//           (softmax in the loss), and with `direct` also a dense layer from the concatenated embeddings
//           straight to the output, added (the paper's y = b + Wx + U tanh(d + Hx)). Without a hidden layer the
//           output reads the embeddings directly (y = b + Wx) and `direct` adds nothing.
//   dlrm    click models over CTR data (click_presets.cc): Naumov et al. 2019's DLRM (a bottom MLP on the dense
//   deepfm  features, a table per field, their pairwise dot products, a top MLP) and Guo et al. 2017's DeepFM
//           (a linear part over ids, an FM over the field vectors, an MLP over them and the dense features)
#include <cstddef>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace pstrain::nn {

struct PresetOptions {
  std::string name = "mlp";                       // mlp | cnn | resnet | nplm | dlrm | deepfm
  std::vector<std::size_t> hidden{256, 128};      // mlp and cnn: widths of the hidden dense layers; nplm: 0 or 1;
                                                  // dlrm: the top MLP; deepfm: the deep MLP
  std::vector<std::size_t> conv_filters{32, 64};  // cnn
  std::size_t kernel_size = 3;                    // cnn
  compute::Activation activation = compute::Activation::kRelu;  // mlp and cnn (resnet: relu)
  double width = 1.0;                                           // resnet: channel multiplier
  bool batch_norm = true;                                       // resnet
  std::size_t classes = 10;
  std::size_t vocab = 0;                       // nplm: ids the embedding takes (the data's vocab_size)
  std::size_t embedding_dim = 30;              // nplm: m; dlrm, deepfm: the field vectors' length
  bool direct = false;                         // nplm: direct connections from the embeddings to the output
  std::size_t dense_features = 0;              // dlrm, deepfm: the data's dense features
  std::vector<std::size_t> field_rows;         // dlrm, deepfm: the rows of each categorical field's table
  std::vector<std::size_t> bottom_hidden{64};  // dlrm: the bottom MLP's widths before embedding_dim
};

// The model-file text of a preset; Error(kUsage) for an unknown name or options no network can be built from.
std::string preset_text(const PresetOptions& options);

// The names --model accepts.
std::vector<std::string> preset_names();

}  // namespace pstrain::nn
