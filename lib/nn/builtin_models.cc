// The built-in models behind make_mlp and make_cnn (model.h): their specs checked, turned into preset texts
// (presets.h) and planned like any model file, so --model mlp and --model cnn are layer graphs too.
#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>

#include "core/error.h"
#include "nn/graph_model.h"
#include "nn/model.h"
#include "nn/presets.h"

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
                width, "x", channels, " input, ", filters, " filters of ", spec.kernel_size, "x", spec.kernel_size,
                ")"));
    channels = filters;
    height /= 2;
    width /= 2;
  }
  std::size_t widest = std::max(product({height, width, channels}), spec.num_classes);
  for (std::size_t units : spec.hidden) widest = std::max(widest, units);
  require(saturating_product(spec.max_batch, widest) <= kMaxInt,
          cat("batch size ", spec.max_batch, " is too large for fully connected layers of width ", widest));
}

void validate_mlp_spec(const MlpSpec& spec) {
  constexpr auto kMaxInt = static_cast<std::size_t>(std::numeric_limits<int>::max());
  if (spec.input_size == 0) throw Error(ExitCode::kUsage, "model input size must be > 0");
  if (spec.num_classes < 2)
    throw Error(ExitCode::kUsage, cat("model needs at least 2 classes, got ", spec.num_classes));
  for (std::size_t width : spec.hidden) {
    if (width == 0) throw Error(ExitCode::kUsage, "every hidden layer needs at least one unit");
  }
  if (spec.max_batch == 0) throw Error(ExitCode::kUsage, "batch size must be > 0");
  // Backend sizes are BLAS ints; the largest workspace is max_batch rows of the widest layer.
  std::size_t widest = std::max(spec.input_size, spec.num_classes);
  for (std::size_t width : spec.hidden) widest = std::max(widest, width);
  if (spec.max_batch > kMaxInt / widest) {
    throw Error(ExitCode::kUsage, cat("batch size ", spec.max_batch, " is too large for layers of width ", widest));
  }
}

std::unique_ptr<Model> make_mlp(compute::Backend& backend, const MlpSpec& spec) {
  validate_mlp_spec(spec);
  PresetOptions options;
  options.name = "mlp";
  options.hidden = spec.hidden;
  options.activation = spec.activation;
  options.classes = spec.num_classes;
  ModelPlan plan =
      plan_model(parse_model_text(preset_text(options), "preset mlp"), {spec.input_size}, spec.num_classes);
  return make_graph_model(backend, std::move(plan), spec.max_batch);
}

std::unique_ptr<Model> make_cnn(compute::Backend& backend, const CnnSpec& spec) {
  validate_cnn_spec(spec);
  PresetOptions options;
  options.name = "cnn";
  options.hidden = spec.hidden;
  options.conv_filters = spec.conv_filters;
  options.kernel_size = spec.kernel_size;
  options.activation = spec.activation;
  options.classes = spec.num_classes;
  ModelPlan plan = plan_model(parse_model_text(preset_text(options), "preset cnn"),
                              {spec.height, spec.width, spec.channels}, spec.num_classes);
  return make_graph_model(backend, std::move(plan), spec.max_batch);
}

}  // namespace pstrain::nn
