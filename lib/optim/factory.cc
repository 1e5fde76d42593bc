// make_optimizer: validates the user's configuration once, here, so each optimizer can trust it.
#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/error.h"
#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

void check_kind(const std::string& kind) {
  if (kind != "sgd" && kind != "momentum" && kind != "adagrad" && kind != kRowwiseAdagrad && kind != "adam") {
    throw Error(ExitCode::kUsage,
                cat("unknown optimizer '", kind, "' (expected sgd, momentum, adagrad, ", kRowwiseAdagrad, " or adam)"));
  }
}

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
  if (config.schedule != "constant" && config.schedule != "cosine" && config.schedule != "piecewise" &&
      config.schedule != "step" && config.schedule != "onecycle") {
    throw Error(ExitCode::kUsage,
                cat("--lr-schedule '", config.schedule, "' is not one of constant, cosine, piecewise, step, onecycle"));
  }
  if (config.nesterov && config.kind != "momentum") {
    throw Error(ExitCode::kUsage, cat("--nesterov needs --optimizer momentum (got ", config.kind, ")"));
  }
  if (!(std::isfinite(config.warmup_passes) && config.warmup_passes >= 0)) {
    throw Error(ExitCode::kUsage, cat("--lr-warmup-passes must be a finite number >= 0, got ", config.warmup_passes));
  }
  if (config.schedule == "step") {
    if (!(std::isfinite(config.step_passes) && config.step_passes > 0)) {
      throw Error(ExitCode::kUsage, cat("--lr-schedule step needs --lr-step-passes > 0, got ", config.step_passes));
    }
    if (!(config.step_gamma > 0 && config.step_gamma <= 1)) {
      throw Error(ExitCode::kUsage, cat("--lr-step-gamma must be in (0, 1], got ", config.step_gamma));
    }
  }
  if (config.schedule == "piecewise") {
    const auto& points = config.lr_points;
    const auto& factors = config.lr_factors;
    if (points.size() < 2) {
      throw Error(ExitCode::kUsage,
                  cat("--lr-schedule piecewise needs at least 2 --lr-points (passes), got ", points.size()));
    }
    if (factors.size() != points.size()) {
      throw Error(ExitCode::kUsage, cat("--lr-factors has ", factors.size(), " values for ", points.size(),
                                        " --lr-points: give one factor per point"));
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!(std::isfinite(points[i]) && points[i] >= 0)) {
        throw Error(ExitCode::kUsage,
                    cat("--lr-points must be finite and >= 0 (passes): point ", i + 1, " is ", points[i]));
      }
      if (i > 0 && !(points[i] > points[i - 1])) {
        throw Error(ExitCode::kUsage, cat("--lr-points must be strictly increasing: point ", i + 1, " (", points[i],
                                          ") does not come after point ", i, " (", points[i - 1], ")"));
      }
      if (!(std::isfinite(factors[i]) && factors[i] >= 0)) {
        throw Error(ExitCode::kUsage, cat("--lr-factors must be finite and >= 0: factor ", i + 1, " is ", factors[i]));
      }
    }
  } else if (!config.lr_points.empty() || !config.lr_factors.empty()) {
    throw Error(ExitCode::kUsage,
                cat("--lr-points and --lr-factors need --lr-schedule piecewise (got ", config.schedule, ")"));
  }
}

// Cosine interpolation from `from` (x = 0) to `to` (x = 1), as PyTorch's OneCycleLR anneals.
double cosine_anneal(double from, double to, double x) {
  return to + (from - to) * 0.5 * (1.0 + std::cos(M_PI * x));
}

// numpy.interp(position, points, factors): clamped to the end factors outside the points.
double interpolate(const std::vector<double>& points, const std::vector<double>& factors, double position) {
  if (position <= points.front()) return factors.front();
  if (position >= points.back()) return factors.back();
  const auto after =
      static_cast<std::size_t>(std::upper_bound(points.begin(), points.end(), position) - points.begin());
  const std::size_t before = after - 1;
  const double fraction = (position - points[before]) / (points[after] - points[before]);
  return factors[before] + fraction * (factors[after] - factors[before]);
}

}  // namespace

bool decays(const std::string& name) {
  constexpr std::string_view kSuffix = ".weight";
  return name.size() >= kSuffix.size() && name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

float scheduled_learning_rate(const OptimizerConfig& config, std::uint64_t update) {
  const double lr = config.learning_rate;
  const double done = static_cast<double>(update > 0 ? update - 1 : 0);  // updates before this one
  // Without a known run length (validation, or a run of no updates) every schedule stays at its start.
  const double progress =
      config.total_updates == 0 ? 0.0 : std::min(1.0, done / static_cast<double>(config.total_updates));
  const double position = config.updates_per_pass == 0 ? 0.0 : done / static_cast<double>(config.updates_per_pass);
  double rate = lr;
  if (config.schedule == "cosine") {
    if (config.total_updates == 0) return config.learning_rate;
    rate = 0.5 * lr * (1.0 + std::cos(M_PI * progress));
  } else if (config.schedule == "piecewise") {
    rate = lr * interpolate(config.lr_points, config.lr_factors, position);
  } else if (config.schedule == "step") {
    rate = lr * std::pow(config.step_gamma, std::floor(position / config.step_passes));
  } else if (config.schedule == "onecycle") {
    constexpr double kRise = 0.3;             // PyTorch's pct_start
    const double initial = lr / 25.0;         // div_factor
    const double final_rate = initial / 1e4;  // final_div_factor
    rate = progress < kRise ? cosine_anneal(initial, lr, progress / kRise)
                            : cosine_anneal(lr, final_rate, (progress - kRise) / (1.0 - kRise));
  }
  if (config.warmup_passes > 0 && config.updates_per_pass > 0) {
    const double warmup_updates = config.warmup_passes * static_cast<double>(config.updates_per_pass);
    rate *= std::min(1.0, static_cast<double>(update) / warmup_updates);
  }
  return static_cast<float>(rate);
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::size_t size,
                                          std::vector<std::uint8_t> decay_mask) {
  check_kind(config.kind);
  validate(config);
  if (config.kind == "sgd") return make_sgd(config, size, std::move(decay_mask));
  if (config.kind == "momentum") return make_momentum(config, size, std::move(decay_mask));
  // Row-wise Adagrad is a rule for the rows of tables (row_optimizer.h); every other parameter gets Adagrad's.
  if (config.kind == "adagrad" || config.kind == kRowwiseAdagrad)
    return make_adagrad(config, size, std::move(decay_mask));
  return make_adam(config, size, std::move(decay_mask));
}

}  // namespace pstrain::optim
