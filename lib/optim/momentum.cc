// momentum (PyTorch's form, no dampening): g' = g + wd*w;  v = mu*v + g';  w -= lr * v
#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

class Momentum final : public OptimizerBase {
 public:
  Momentum(const OptimizerConfig& config, std::size_t size)
      : OptimizerBase(config, size),
        momentum_(config.momentum),
        weight_decay_(config.weight_decay),
        velocity_(size, 0.0f) {}

  std::string name() const override { return "momentum"; }

  void step(std::span<float> parameters, std::span<const float> gradients) override {
    begin_step(parameters, gradients);
    const float learning_rate = this->learning_rate();
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const float gradient = gradients[i] + weight_decay_ * parameters[i];
      // With v starting at 0 the first step gives v = g', which is what PyTorch does explicitly.
      velocity_[i] = momentum_ * velocity_[i] + gradient;
      parameters[i] -= learning_rate * velocity_[i];
    }
  }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {{"velocity", &velocity_}}; }

 private:
  float momentum_;
  float weight_decay_;
  std::vector<float> velocity_;
};

}  // namespace

std::unique_ptr<Optimizer> make_momentum(const OptimizerConfig& config, std::size_t size) {
  return std::make_unique<Momentum>(config, size);
}

}  // namespace pstrain::optim
