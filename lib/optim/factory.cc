// make_optimizer: validates the user's configuration once, here, so each optimizer can trust it.
#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

// Written as !(in range) so that NaN, which fails every comparison, is rejected too.
void validate(const OptimizerConfig& config) {
  if (!(std::isfinite(config.learning_rate) && config.learning_rate > 0.0f)) {
    throw Error(ExitCode::kUsage, cat("--lr must be a finite number > 0, got ", config.learning_rate));
  }
  if (!(config.momentum >= 0.0f && config.momentum < 1.0f)) {
    throw Error(ExitCode::kUsage, cat("--momentum must be in [0, 1), got ", config.momentum));
  }
  if (!(std::isfinite(config.weight_decay) && config.weight_decay >= 0.0f)) {
    throw Error(ExitCode::kUsage, cat("--weight-decay must be a finite number >= 0, got ", config.weight_decay));
  }
  if (!(config.beta1 >= 0.0f && config.beta1 < 1.0f)) {
    throw Error(ExitCode::kUsage, cat("adam beta1 must be in [0, 1), got ", config.beta1));
  }
  if (!(config.beta2 >= 0.0f && config.beta2 < 1.0f)) {
    throw Error(ExitCode::kUsage, cat("adam beta2 must be in [0, 1), got ", config.beta2));
  }
  if (!(std::isfinite(config.epsilon) && config.epsilon > 0.0f)) {
    throw Error(ExitCode::kUsage, cat("adam epsilon must be a finite number > 0, got ", config.epsilon));
  }
}

}  // namespace

float scheduled_learning_rate(const OptimizerConfig& config, std::uint64_t update) {
  if (config.schedule != "cosine" || config.total_updates == 0) return config.learning_rate;
  const double progress = std::min(1.0, static_cast<double>(update > 0 ? update - 1 : 0) /
                                            static_cast<double>(config.total_updates));
  return static_cast<float>(0.5 * config.learning_rate * (1.0 + std::cos(M_PI * progress)));
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::size_t size) {
  if (config.kind != "sgd" && config.kind != "momentum" && config.kind != "adam") {
    throw Error(ExitCode::kUsage, cat("unknown optimizer '", config.kind, "' (expected sgd, momentum or adam)"));
  }
  validate(config);
  if (config.schedule != "constant" && config.schedule != "cosine") {
    throw Error(ExitCode::kUsage, cat("--lr-schedule '", config.schedule, "' is not one of constant, cosine"));
  }
  if (config.kind == "sgd") return make_sgd(config, size);
  if (config.kind == "momentum") return make_momentum(config, size);
  return make_adam(config, size);
}

}  // namespace pstrain::optim
