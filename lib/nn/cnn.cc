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
// Parameters and gradients are single flat backend buffers laid out as conv1.weight, conv1.bias, ...,
// fc1.weight, fc1.bias, ...; every workspace is allocated once, for spec.max_batch images, so a training step
// allocates nothing.
#include <random>
#include <vector>

#include "core/error.h"
#include "nn/cnn_layout.h"
#include "nn/conv2d.h"
#include "nn/dense.h"
#include "nn/initialization.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Backend;
using compute::Buffer;

class Cnn final : public Model {
 public:
  Cnn(Backend& backend, const CnnSpec& spec)
      : backend_(backend), spec_(spec), shape_(cnn_shape(spec)), layout_(cnn_parameter_layout(spec)) {
    parameter_count_ = layout_.back().offset + layout_.back().size;
    parameters_ = Buffer<float>(backend_, parameter_count_);
    gradients_ = Buffer<float>(backend_, parameter_count_);
    backend_.fill(parameters_.data(), parameter_count_, 0.0f);
    backend_.fill(gradients_.data(), parameter_count_, 0.0f);
    input_ = Buffer<float>(backend_, spec_.max_batch * input_size());
    labels_ = Buffer<std::int32_t>(backend_, spec_.max_batch);

    const std::size_t max_batch = spec_.max_batch;
    std::size_t parameter = 0;  // index into layout_
    for (const ConvStage& stage : shape_.stages) {
      const ParameterInfo& weight = layout_[parameter++];
      const ParameterInfo& bias = layout_[parameter++];
      ConvBlock block{.layer = Conv2d(backend_, stage.conv, stage.filters,
                                      Conv2dView{parameters_.data() + weight.offset, parameters_.data() + bias.offset,
                                                 gradients_.data() + weight.offset, gradients_.data() + bias.offset}),
                      .pool = stage.pool};
      const std::size_t pooled_count = pooled_size(block, max_batch);
      block.columns = Buffer<float>(backend_, block.layer.columns_size(max_batch));
      block.output = Buffer<float>(backend_, block.layer.output_size(max_batch));
      block.pooled = Buffer<float>(backend_, pooled_count);
      block.argmax = Buffer<std::int32_t>(backend_, pooled_count);
      block.activated = Buffer<float>(backend_, pooled_count);
      block.activated_gradient = Buffer<float>(backend_, pooled_count);
      conv_blocks_.push_back(std::move(block));
    }

    const std::vector<std::size_t>& widths = shape_.dense_widths;
    for (std::size_t layer = 0; layer + 1 < widths.size(); ++layer) {
      const ParameterInfo& weight = layout_[parameter++];
      const ParameterInfo& bias = layout_[parameter++];
      const std::size_t rows_times_width = max_batch * widths[layer + 1];
      DenseBlock block{.layer = Dense(backend_, widths[layer], widths[layer + 1],
                                      DenseView{parameters_.data() + weight.offset, parameters_.data() + bias.offset,
                                                gradients_.data() + weight.offset, gradients_.data() + bias.offset})};
      block.output = Buffer<float>(backend_, rows_times_width);
      block.output_gradient = Buffer<float>(backend_, rows_times_width);
      if (layer + 2 < widths.size()) {  // hidden
        block.activated = Buffer<float>(backend_, rows_times_width);
        block.activated_gradient = Buffer<float>(backend_, rows_times_width);
      }
      dense_blocks_.push_back(std::move(block));
    }
    PSTRAIN_ASSERT(parameter == layout_.size(), "layout has ", layout_.size(), " entries, layers use ", parameter);
  }

  const std::vector<ParameterInfo>& parameters() const override { return layout_; }
  std::size_t parameter_count() const override { return parameter_count_; }
  std::size_t input_size() const override { return spec_.height * spec_.width * spec_.channels; }
  std::size_t num_classes() const override { return spec_.num_classes; }

  void initialize(std::uint64_t seed) override {
    // One engine for the whole model, weights in layout order, biases 0 and consuming nothing. A convolution's
    // fan-in is one output's receptive field (k*k*C) and its fan-out k*k*filters, as in PyTorch.
    std::vector<float> host(parameter_count_, 0.0f);
    std::mt19937_64 engine(seed);
    std::size_t parameter = 0;
    for (const ConvBlock& block : conv_blocks_) {
      const ParameterInfo& weight = layout_[parameter];
      parameter += 2;
      const auto kernel_area = static_cast<std::size_t>(block.layer.geometry().kernel * block.layer.geometry().kernel);
      const float limit = init_limit(spec_.activation, kernel_area * block.layer.geometry().channels,
                                     kernel_area * block.layer.filters());
      fill_uniform(engine, limit, std::span<float>(host).subspan(weight.offset, weight.size));
    }
    for (const DenseBlock& block : dense_blocks_) {
      const ParameterInfo& weight = layout_[parameter];
      parameter += 2;
      const float limit = init_limit(spec_.activation, block.layer.inputs(), block.layer.outputs());
      fill_uniform(engine, limit, std::span<float>(host).subspan(weight.offset, weight.size));
    }
    set_parameters(host);
  }

  void get_parameters(std::span<float> host_out) const override {
    check_flat_size(host_out.size(), "get_parameters");
    backend_.copy_to_host(host_out.data(), parameters_.data(), parameter_count_ * sizeof(float));
  }

  void set_parameters(std::span<const float> host_in) override {
    check_flat_size(host_in.size(), "set_parameters");
    backend_.copy_from_host(parameters_.data(), host_in.data(), parameter_count_ * sizeof(float));
  }

  void get_gradients(std::span<float> host_out) const override {
    check_flat_size(host_out.size(), "get_gradients");
    backend_.copy_to_host(host_out.data(), gradients_.data(), parameter_count_ * sizeof(float));
  }

  std::span<float> host_parameters() override {
    if (!backend_.host_accessible()) return {};
    return {parameters_.data(), parameter_count_};
  }
  std::span<const float> host_gradients() const override {
    if (!backend_.host_accessible()) return {};
    return {gradients_.data(), parameter_count_};
  }

  float* backend_parameters() override { return parameters_.data(); }
  float* backend_gradients() override { return gradients_.data(); }

  BatchResult train_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t count) override {
    PSTRAIN_ASSERT(count > 0, "train_batch needs at least one sample");
    const int batch = load_batch(features, labels, count);
    forward(batch);
    // The loss writes d(mean loss)/d(logits) straight into the last layer's output gradient.
    const auto loss = backend_.softmax_cross_entropy(dense_blocks_.back().output.data(), labels_.data(),
                                                     dense_blocks_.back().output_gradient.data(), batch,
                                                     static_cast<int>(spec_.num_classes));
    backward(batch);
    return {loss.loss_sum, loss.correct, count};
  }

  BatchResult evaluate_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                             std::size_t count) override {
    if (count == 0) return {};
    const int batch = load_batch(features, labels, count);
    forward(batch);
    const auto loss = backend_.softmax_cross_entropy(dense_blocks_.back().output.data(), labels_.data(), nullptr,
                                                     batch, static_cast<int>(spec_.num_classes));
    return {loss.loss_sum, loss.correct, count};
  }

 private:
  // A convolution block's layer and workspaces, spec.max_batch images each.
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

  // A fully connected layer and its workspaces, as in the MLP.
  struct DenseBlock {
    Dense layer;
    Buffer<float> output{};              // x W^T + b (the logits for the last layer)
    Buffer<float> output_gradient{};     // dL/d output
    Buffer<float> activated{};           // activation(output); hidden layers only
    Buffer<float> activated_gradient{};  // dL/d activated; hidden layers only
  };

  void check_flat_size(std::size_t size, const char* caller) const {
    PSTRAIN_ASSERT(size == parameter_count_, caller, " got ", size, " floats for a model of ", parameter_count_,
                   " parameters");
  }

  // Validates the batch and copies it into backend memory; returns the sample count as the backend's int.
  int load_batch(std::span<const float> features, std::span<const std::int32_t> labels, std::size_t count) {
    if (count > spec_.max_batch) {
      throw Error(ExitCode::kUsage,
                  cat("batch of ", count, " samples exceeds the model's maximum batch size ", spec_.max_batch));
    }
    PSTRAIN_ASSERT(features.size() == count * input_size(), "features hold ", features.size(), " floats, expected ",
                   count, " x ", input_size());
    PSTRAIN_ASSERT(labels.size() == count, "labels hold ", labels.size(), " values, expected ", count);
    backend_.copy_from_host(input_.data(), features.data(), features.size_bytes());
    backend_.copy_from_host(labels_.data(), labels.data(), labels.size_bytes());
    return static_cast<int>(count);
  }

  const float* conv_input(std::size_t block) const {
    return block == 0 ? input_.data() : conv_blocks_[block - 1].activated.data();
  }
  // The last block's NHWC output is already fc1's (h, w, c)-flattened input.
  const float* dense_input(std::size_t layer) const {
    return layer == 0 ? conv_blocks_.back().activated.data() : dense_blocks_[layer - 1].activated.data();
  }

  static std::size_t pooled_size(const ConvBlock& block, std::size_t batch) {
    return batch * static_cast<std::size_t>(block.pool.out_height()) *
           static_cast<std::size_t>(block.pool.out_width()) * static_cast<std::size_t>(block.pool.channels);
  }

  void forward(int batch) {
    for (std::size_t block_index = 0; block_index < conv_blocks_.size(); ++block_index) {
      ConvBlock& block = conv_blocks_[block_index];
      block.layer.forward(conv_input(block_index), block.columns.data(), block.output.data(), batch);
      backend_.max_pool_forward(block.output.data(), block.pooled.data(), block.argmax.data(), block.pool, batch);
      backend_.activation_forward(spec_.activation, block.pooled.data(), block.activated.data(),
                                  pooled_size(block, static_cast<std::size_t>(batch)));
    }
    for (std::size_t layer = 0; layer < dense_blocks_.size(); ++layer) {
      DenseBlock& block = dense_blocks_[layer];
      block.layer.forward(dense_input(layer), block.output.data(), batch);
      if (layer + 1 < dense_blocks_.size()) {
        backend_.activation_forward(spec_.activation, block.output.data(), block.activated.data(),
                                    static_cast<std::size_t>(batch) * block.layer.outputs());
      }
    }
  }

  // Expects the last dense block's output_gradient to hold dL/d logits.
  void backward(int batch) {
    for (std::size_t layer = dense_blocks_.size(); layer-- > 0;) {
      float* input_gradient = layer == 0 ? conv_blocks_.back().activated_gradient.data()
                                         : dense_blocks_[layer - 1].activated_gradient.data();
      dense_blocks_[layer].layer.backward(dense_input(layer), dense_blocks_[layer].output_gradient.data(),
                                          input_gradient, batch);
      if (layer > 0) {
        DenseBlock& below = dense_blocks_[layer - 1];
        backend_.activation_backward(spec_.activation, below.activated.data(), below.activated_gradient.data(),
                                     below.output_gradient.data(),
                                     static_cast<std::size_t>(batch) * below.layer.outputs());
      }
    }
    for (std::size_t block_index = conv_blocks_.size(); block_index-- > 0;) {
      ConvBlock& block = conv_blocks_[block_index];
      backend_.activation_backward(spec_.activation, block.activated.data(), block.activated_gradient.data(),
                                   block.pooled.data(), pooled_size(block, static_cast<std::size_t>(batch)));
      backend_.max_pool_backward(block.pooled.data(), block.argmax.data(), block.output.data(), block.pool, batch);
      float* input_gradient = block_index == 0 ? nullptr : conv_blocks_[block_index - 1].activated_gradient.data();
      block.layer.backward(block.columns.data(), block.output.data(), input_gradient, batch);
    }
  }

  Backend& backend_;
  CnnSpec spec_;
  CnnShape shape_;
  std::vector<ParameterInfo> layout_;
  std::size_t parameter_count_ = 0;
  Buffer<float> parameters_;
  Buffer<float> gradients_;
  Buffer<float> input_;
  Buffer<std::int32_t> labels_;
  std::vector<ConvBlock> conv_blocks_;
  std::vector<DenseBlock> dense_blocks_;
};

}  // namespace

std::unique_ptr<Model> make_cnn(compute::Backend& backend, const CnnSpec& spec) {
  validate_cnn_spec(spec);
  return std::make_unique<Cnn>(backend, spec);
}

}  // namespace pstrain::nn
