#include "nn/presets.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "nn/click_presets.h"

namespace pstrain::nn {

namespace {

std::string init_for(compute::Activation activation) {
  return activation == compute::Activation::kRelu ? "kaiming" : "glorot";
}

// fc1..fcN: the hidden widths then the classes, the activation after every layer but the last.
void dense_head(std::ostringstream& out, const PresetOptions& options, std::size_t first_activation) {
  const std::string activation = compute::to_string(options.activation);
  const std::string init = init_for(options.activation);
  std::size_t activations = first_activation;
  for (std::size_t i = 0; i < options.hidden.size(); ++i) {
    out << "fc" << i + 1 << " dense units=" << options.hidden[i] << " init=" << init << "\n";
    out << "act" << ++activations << " " << activation << "\n";
  }
  out << "fc" << options.hidden.size() + 1 << " dense units=" << options.classes << " init=" << init << "\n";
}

std::string mlp_text(const PresetOptions& options) {
  std::ostringstream out;
  out << "# preset mlp\nflat flatten\n";
  dense_head(out, options, 0);
  return out.str();
}

std::string cnn_text(const PresetOptions& options) {
  if (options.conv_filters.empty()) throw Error(ExitCode::kUsage, "--model cnn needs at least one convolution layer");
  if (options.kernel_size % 2 == 0) {
    throw Error(ExitCode::kUsage, cat("--kernel-size ", options.kernel_size, " must be odd ('same' padding)"));
  }
  std::ostringstream out;
  out << "# preset cnn: conv blocks pool before their activation (the same function for a monotone activation)\n";
  const std::string activation = compute::to_string(options.activation);
  for (std::size_t i = 0; i < options.conv_filters.size(); ++i) {
    out << "conv" << i + 1 << " conv2d filters=" << options.conv_filters[i] << " kernel=" << options.kernel_size
        << " init=" << init_for(options.activation) << "\n";
    out << "pool" << i + 1 << " maxpool window=2\n";
    out << "act" << i + 1 << " " << activation << "\n";
  }
  out << "flat flatten\n";
  dense_head(out, options, options.conv_filters.size());
  return out.str();
}

// conv (+ batch norm) + relu, named NAME, NAME_bn, NAME_act; returns the name of its last layer.
std::string conv_unit(std::ostringstream& out, const std::string& name, std::size_t filters, bool batch_norm,
                      const std::string& inputs = "") {
  out << name << " conv2d filters=" << filters << " kernel=3 bias=" << (batch_norm ? "false" : "true")
      << (inputs.empty() ? "" : " inputs=" + inputs) << "\n";
  if (batch_norm) out << name << "_bn batchnorm\n";
  out << name << "_act relu\n";
  return name + "_act";
}

std::string resnet_text(const PresetOptions& options) {
  if (!(options.width > 0) || options.width > 64)
    throw Error(ExitCode::kUsage, cat("--width ", options.width, " must be in (0, 64]"));
  const auto channels = [&](double base) {
    return static_cast<std::size_t>(std::max(1.0, std::round(base * options.width)));
  };
  const bool bn = options.batch_norm;
  std::ostringstream out;
  out << "# preset resnet: the DAWNBench ResNet-9 shape, width " << options.width << ", batch norm "
      << (bn ? "on" : "off") << "\n";
  conv_unit(out, "prep", channels(64), bn);
  const auto stage = [&](const std::string& name, std::size_t filters, bool residual) {
    conv_unit(out, name, filters, bn);
    out << name << "_pool maxpool window=2\n";
    if (!residual) return;
    conv_unit(out, name + "_res1", filters, bn);
    const std::string last = conv_unit(out, name + "_res2", filters, bn);
    out << name << "_add add inputs=" << name << "_pool," << last << "\n";
  };
  stage("layer1", channels(128), true);
  stage("layer2", channels(256), false);
  stage("layer3", channels(512), true);
  out << "pool global_avgpool\n";
  out << "linear dense units=" << options.classes << " bias=false init=glorot\n";
  out << "logits scale factor=0.125\n";
  return out.str();
}

std::string nplm_text(const PresetOptions& options) {
  if (options.vocab == 0) {
    throw Error(ExitCode::kUsage, "--model nplm needs token shards (N-gram windows from pstrain-data brown or text)");
  }
  if (options.hidden.size() > 1) {
    throw Error(ExitCode::kUsage, cat("--model nplm has at most one hidden layer; --hidden gives ",
                                      options.hidden.size(), " (use one width, or none)"));
  }
  if (options.embedding_dim == 0) throw Error(ExitCode::kUsage, "--embedding-dim must be at least 1");
  std::ostringstream out;
  out << "# preset nplm: Bengio et al. 2003, m=" << options.embedding_dim
      << ", h=" << (options.hidden.empty() ? std::size_t{0} : options.hidden[0]) << ", direct connections "
      << (options.direct && !options.hidden.empty() ? "on" : "off") << "\n";
  out << "embed embedding vocab=" << options.vocab << " dim=" << options.embedding_dim << "\n";
  out << "context flatten\n";
  if (options.hidden.empty()) {
    out << "logits dense units=" << options.classes << " init=glorot\n";
    return out.str();
  }
  out << "hidden dense units=" << options.hidden[0] << " init=glorot\n";
  out << "hidden_act tanh\n";
  if (!options.direct) {
    out << "logits dense units=" << options.classes << " init=glorot\n";
    return out.str();
  }
  out << "output dense units=" << options.classes << " init=glorot\n";
  out << "direct dense units=" << options.classes << " bias=false init=glorot inputs=context\n";
  out << "logits add inputs=output,direct\n";
  return out.str();
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"mlp", "cnn", "resnet", "nplm", "dlrm", "deepfm"};
}

std::string preset_text(const PresetOptions& options) {
  for (const std::size_t width : options.hidden) {
    if (width == 0) throw Error(ExitCode::kUsage, "every hidden layer needs at least one unit");
  }
  for (const std::size_t filters : options.conv_filters) {
    if (filters == 0) throw Error(ExitCode::kUsage, "every convolution layer needs at least one filter");
  }
  if (options.name == "mlp") return mlp_text(options);
  if (options.name == "cnn") return cnn_text(options);
  if (options.name == "resnet") return resnet_text(options);
  if (options.name == "nplm") return nplm_text(options);
  if (options.name == "dlrm") return dlrm_text(options);
  if (options.name == "deepfm") return deepfm_text(options);
  throw Error(ExitCode::kUsage, cat("--model ", options.name,
                                    ": expected mlp, cnn, resnet, nplm, dlrm or deepfm (or --model-file FILE)"));
}

}  // namespace pstrain::nn
