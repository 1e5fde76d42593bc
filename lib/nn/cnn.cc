// The convolutional network: conv blocks (Conv2d -> activation -> 2x2/2 max-pool) over NHWC images, then
// fc1..fcN Dense layers on the flattened (h, w, c) output of the last block, the spec's activation after every
// hidden layer and softmax cross-entropy on the last.
//
// A block pools BEFORE its activation: every activation here (relu, tanh, sigmoid) is non-decreasing, so
// max(f(z)) = f(max(z)) and the network computes the same function, with the activation and its derivative on
// a quarter of the elements and no full-size activated buffers. The gradient is the same too: the two orders
// route a window's gradient to different elements only where f is flat across them (relu below 0, saturation),
// where f' is 0 or identical. A non-monotone activation (GELU, swish) would need the documented order back.
//
// Parameters are laid out as conv1.weight, conv1.bias, ..., fc1.weight, fc1.bias, ...; FlatModel owns them and
// the training step. Every workspace is allocated once, for spec.max_batch images.
#include <vector>

#include "core/error.h"
#include "nn/cnn_layout.h"
#include "nn/conv2d.h"
#include "nn/dense_stack.h"
#include "nn/flat_model.h"
#include "nn/initialization.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Buffer;

class Cnn final : public FlatModel {
 public:
  Cnn(compute::Backend& backend, const CnnSpec& spec)
      : FlatModel(backend, cnn_parameter_layout(spec), spec.height * spec.width * spec.channels, spec.num_classes,
                  spec.max_batch),
        activation_(spec.activation),
        shape_(cnn_shape(spec)),
        conv_blocks_(make_conv_blocks()),
        dense_(backend, shape_.dense_widths, layer_views(conv_blocks_.size(), shape_.dense_widths.size() - 1),
               spec.activation, spec.max_batch) {
    PSTRAIN_ASSERT(conv_blocks_.size() + dense_.size() == layer_count(), "layout has ", layer_count(),
                   " layers, the network ", conv_blocks_.size() + dense_.size());
  }

 private:
  // A convolution block's layer and workspaces, max_batch images each.
  struct ConvBlock {
    Conv2d layer;
    compute::PoolGeometry pool;
    Buffer<float> columns{};             // im2col of the input; dL/d columns during backward
    // Each buffer below that holds a forward value no longer needed in backward (the activation's derivative is
    // taken from its output) holds that value's gradient during backward.
    Buffer<float> output{};              // conv(x) + b; dL/d output during backward
    Buffer<float> pooled{};              // max-pool of output; dL/d pooled during backward
    Buffer<std::int32_t> argmax{};       // where each pooled value came from
    Buffer<float> activated{};           // activation(pooled): the next block's (or fc1's, flattened) input
    Buffer<float> activated_gradient{};  // dL/d activated, written by the layer above
  };

  // Runs in the constructor's initialiser list (it needs shape_), so that the blocks exist before dense_, whose
  // parameters follow theirs in the layout.
  std::vector<ConvBlock> make_conv_blocks() const {
    std::vector<ConvBlock> blocks;
    for (const ConvStage& stage : shape_.stages) {
      ConvBlock block{.layer = Conv2d(backend(), stage.conv, stage.filters, layer_view(blocks.size())),
                      .pool = stage.pool};
      const std::size_t pooled_count = pooled_size(block, max_batch());
      block.columns = Buffer<float>(backend(), block.layer.columns_size(max_batch()));
      block.output = Buffer<float>(backend(), block.layer.output_size(max_batch()));
      block.pooled = Buffer<float>(backend(), pooled_count);
      block.argmax = Buffer<std::int32_t>(backend(), pooled_count);
      block.activated = Buffer<float>(backend(), pooled_count);
      block.activated_gradient = Buffer<float>(backend(), pooled_count);
      blocks.push_back(std::move(block));
    }
    return blocks;
  }

  static std::size_t pooled_size(const ConvBlock& block, std::size_t batch) {
    return batch * static_cast<std::size_t>(block.pool.out_height()) *
           static_cast<std::size_t>(block.pool.out_width()) * static_cast<std::size_t>(block.pool.channels);
  }

  const float* conv_input(std::size_t block) const {
    return block == 0 ? input() : conv_blocks_[block - 1].activated.data();
  }

  // A convolution's fan-in is one output's receptive field (k*k*C) and its fan-out k*k*filters, as in PyTorch.
  float weight_limit(std::size_t layer) const override {
    if (layer >= conv_blocks_.size()) return dense_.weight_limit(layer - conv_blocks_.size());
    const Conv2d& conv = conv_blocks_[layer].layer;
    const auto kernel_area = static_cast<std::size_t>(conv.geometry().kernel * conv.geometry().kernel);
    return init_limit(activation_, kernel_area * conv.geometry().channels, kernel_area * conv.filters());
  }

  const float* forward(int batch) override {
    for (std::size_t block_index = 0; block_index < conv_blocks_.size(); ++block_index) {
      ConvBlock& block = conv_blocks_[block_index];
      block.layer.forward(conv_input(block_index), block.columns.data(), block.output.data(), batch);
      backend().max_pool_forward(block.output.data(), block.pooled.data(), block.argmax.data(), block.pool, batch);
      backend().activation_forward(activation_, block.pooled.data(), block.activated.data(),
                                   pooled_size(block, static_cast<std::size_t>(batch)));
    }
    // The last block's NHWC output is already fc1's (h, w, c)-flattened input.
    return dense_.forward(conv_blocks_.back().activated.data(), batch);
  }

  float* logits_gradient() override { return dense_.logits_gradient(); }

  void backward(int batch) override {
    dense_.backward(conv_blocks_.back().activated.data(), conv_blocks_.back().activated_gradient.data(), batch);
    for (std::size_t block_index = conv_blocks_.size(); block_index-- > 0;) {
      ConvBlock& block = conv_blocks_[block_index];
      backend().activation_backward(activation_, block.activated.data(), block.activated_gradient.data(),
                                    block.pooled.data(), pooled_size(block, static_cast<std::size_t>(batch)));
      backend().max_pool_backward(block.pooled.data(), block.argmax.data(), block.output.data(), block.pool, batch);
      float* input_gradient = block_index == 0 ? nullptr : conv_blocks_[block_index - 1].activated_gradient.data();
      block.layer.backward(block.columns.data(), block.output.data(), input_gradient, batch);
    }
  }

  compute::Activation activation_;
  CnnShape shape_;
  std::vector<ConvBlock> conv_blocks_;
  DenseStack dense_;
};

}  // namespace

std::unique_ptr<Model> make_cnn(compute::Backend& backend, const CnnSpec& spec) {
  validate_cnn_spec(spec);
  return std::make_unique<Cnn>(backend, spec);
}

}  // namespace pstrain::nn
