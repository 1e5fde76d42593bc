#include "nn/mlp_layout.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace pstrain::nn {

std::vector<std::size_t> mlp_layer_widths(const MlpSpec& spec) {
  std::vector<std::size_t> widths{spec.input_size};
  widths.insert(widths.end(), spec.hidden.begin(), spec.hidden.end());
  widths.push_back(spec.num_classes);
  return widths;
}

std::vector<ParameterInfo> dense_parameter_layout(const std::vector<std::size_t>& widths) {
  std::vector<ParameterInfo> layout;
  std::size_t offset = 0;
  for (std::size_t layer = 1; layer < widths.size(); ++layer) {
    const std::string prefix = cat("fc", layer);
    const std::size_t inputs = widths[layer - 1];
    const std::size_t outputs = widths[layer];
    layout.push_back({prefix + ".weight", {outputs, inputs}, offset, outputs * inputs});
    offset += outputs * inputs;
    layout.push_back({prefix + ".bias", {outputs}, offset, outputs});
    offset += outputs;
  }
  return layout;
}

void validate_mlp_spec(const MlpSpec& spec) {
  constexpr auto kMaxInt = static_cast<std::size_t>(std::numeric_limits<int>::max());
  if (spec.input_size == 0) throw Error(ExitCode::kUsage, "model input size must be > 0");
  if (spec.num_classes < 2) throw Error(ExitCode::kUsage, cat("model needs at least 2 classes, got ", spec.num_classes));
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

}  // namespace pstrain::nn
