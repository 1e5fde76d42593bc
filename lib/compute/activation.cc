#include "compute/backend.h"
#include "core/error.h"

namespace pstrain::compute {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::kRelu;
  if (name == "tanh") return Activation::kTanh;
  if (name == "sigmoid") return Activation::kSigmoid;
  throw Error(ExitCode::kUsage, cat("unknown activation '", name, "' (expected relu, tanh or sigmoid)"));
}

std::string to_string(Activation activation) {
  switch (activation) {
    case Activation::kRelu: return "relu";
    case Activation::kTanh: return "tanh";
    case Activation::kSigmoid: return "sigmoid";
  }
  PSTRAIN_ASSERT(false, "activation value ", static_cast<int>(activation), " is not an Activation");
}

}  // namespace pstrain::compute
