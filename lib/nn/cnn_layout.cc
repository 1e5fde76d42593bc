#include "nn/cnn_layout.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>

#include "core/error.h"
#include "nn/mlp_layout.h"

namespace pstrain::nn {
namespace {

constexpr auto kMaxInt = static_cast<std::size_t>(std::numeric_limits<int>::max());

// a * b, or SIZE_MAX when that overflows: absurd specs must fail the size checks, not wrap around and pass them.
std::size_t saturating_product(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return std::numeric_limits<std::size_t>::max();
  return a * b;
}

std::size_t product(std::initializer_list<std::size_t> factors) {
  std::size_t result = 1;
  for (std::size_t factor : factors) result = saturating_product(result, factor);
  return result;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw Error(ExitCode::kUsage, message);
}

}  // namespace

void validate_cnn_spec(const CnnSpec& spec) {
  require(spec.height > 0 && spec.width > 0 && spec.channels > 0,
          cat("CNN input images need height, width and channels > 0, got ", spec.height, "x", spec.width, "x",
              spec.channels));
  require(!spec.conv_filters.empty(), "a CNN needs at least one convolution layer (conv_filters is empty)");
  for (std::size_t i = 0; i < spec.conv_filters.size(); ++i) {
    require(spec.conv_filters[i] > 0, cat("convolution layer conv", i + 1, " needs at least one filter"));
  }
  require(spec.kernel_size % 2 == 1,
          cat("convolution kernel size must be odd so that 'same' padding keeps the image size, got ",
              spec.kernel_size));
  for (std::size_t width : spec.hidden) require(width > 0, "every hidden layer needs at least one unit");
  require(spec.num_classes >= 2, cat("model needs at least 2 classes, got ", spec.num_classes));
  require(spec.max_batch > 0, "batch size must be > 0");

  // Each convolution keeps the size and each 2x2/2 pool floors it to half: a pool needs at least 2x2.
  std::size_t height = spec.height, width = spec.width;
  for (std::size_t i = 0; i < spec.conv_filters.size(); ++i) {
    require(height >= 2 && width >= 2,
            cat("a ", spec.height, "x", spec.width, " image is too small for ", spec.conv_filters.size(),
                " convolution layers: each is followed by a 2x2 max-pool, and conv", i + 1, " would pool a ", height,
                "x", width, " image; use fewer convolution layers or larger images"));
    height /= 2;
    width /= 2;
  }

  // The backend speaks BLAS-style int sizes (and int32 pool indices over the whole batch): every matrix
  // dimension, and every pool input, must fit.
  const std::size_t kernel_area = saturating_product(spec.kernel_size, spec.kernel_size);
  std::size_t channels = spec.channels;
  height = spec.height;
  width = spec.width;
  for (std::size_t i = 0; i < spec.conv_filters.size(); ++i) {
    const std::size_t filters = spec.conv_filters[i];
    const std::size_t pixels = product({spec.max_batch, height, width});  // im2col rows
    require(pixels <= kMaxInt && saturating_product(kernel_area, channels) <= kMaxInt && filters <= kMaxInt &&
                saturating_product(pixels, filters) <= kMaxInt,
            cat("batch size ", spec.max_batch, " is too large for convolution layer conv", i + 1, " (", height, "x",
                width, "x", channels, " input, ", filters, " filters of ", spec.kernel_size, "x",
                spec.kernel_size, ")"));
    channels = filters;
    height /= 2;
    width /= 2;
  }
  std::size_t widest = std::max(product({height, width, channels}), spec.num_classes);
  for (std::size_t units : spec.hidden) widest = std::max(widest, units);
  require(saturating_product(spec.max_batch, widest) <= kMaxInt,
          cat("batch size ", spec.max_batch, " is too large for fully connected layers of width ", widest));
}

CnnShape cnn_shape(const CnnSpec& spec) {
  validate_cnn_spec(spec);
  CnnShape shape;
  int height = static_cast<int>(spec.height), width = static_cast<int>(spec.width);
  int channels = static_cast<int>(spec.channels);
  const int kernel = static_cast<int>(spec.kernel_size);
  for (std::size_t filters : spec.conv_filters) {
    ConvStage stage;
    stage.conv = {.height = height, .width = width, .channels = channels, .kernel = kernel, .stride = 1,
                  .padding = (kernel - 1) / 2};
    stage.filters = static_cast<int>(filters);
    stage.pool = {.height = stage.conv.out_height(), .width = stage.conv.out_width(), .channels = stage.filters,
                  .window = 2, .stride = 2};
    height = stage.pool.out_height();
    width = stage.pool.out_width();
    channels = stage.filters;
    shape.stages.push_back(stage);
  }
  shape.dense_widths.push_back(static_cast<std::size_t>(height) * width * channels);
  shape.dense_widths.insert(shape.dense_widths.end(), spec.hidden.begin(), spec.hidden.end());
  shape.dense_widths.push_back(spec.num_classes);
  return shape;
}

std::vector<ParameterInfo> cnn_parameter_layout(const CnnSpec& spec) {
  const CnnShape shape = cnn_shape(spec);
  std::vector<ParameterInfo> layout;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < shape.stages.size(); ++i) {
    const ConvStage& stage = shape.stages[i];
    const std::string prefix = cat("conv", i + 1);
    const auto filters = static_cast<std::size_t>(stage.filters);
    const auto kernel = static_cast<std::size_t>(stage.conv.kernel);
    const auto channels = static_cast<std::size_t>(stage.conv.channels);
    const std::size_t weight_size = filters * kernel * kernel * channels;
    layout.push_back({prefix + ".weight", {filters, kernel, kernel, channels}, offset, weight_size});
    offset += weight_size;
    layout.push_back({prefix + ".bias", {filters}, offset, filters});
    offset += filters;
  }
  for (ParameterInfo info : dense_parameter_layout(shape.dense_widths)) {
    info.offset += offset;
    layout.push_back(std::move(info));
  }
  return layout;
}

}  // namespace pstrain::nn
