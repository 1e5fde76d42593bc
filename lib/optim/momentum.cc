// momentum (PyTorch's form, no dampening): g' = g + wd*w;  v = mu*v + g';  w -= lr * v
// nesterov (PyTorch's nesterov=True):       g' = g + wd*w;  v = mu*v + g';  w -= lr * (g' + mu*v)
#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

class Momentum final : public OptimizerBase {
 public:
  Momentum(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask)
      : OptimizerBase(config, size, std::move(mask)),
        momentum_(config.momentum),
        nesterov_(config.nesterov),
        velocity_(size, 0.0f) {}

  std::string name() const override { return nesterov_ ? "nesterov" : "momentum"; }

  void step(std::span<float> parameters, std::span<const float> gradients) override {
    begin_step(parameters, gradients);
    const float learning_rate = this->learning_rate();
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const float gradient = gradients[i] + weight_decay(i) * parameters[i];
      // With v starting at 0 the first step gives v = g', which is what PyTorch does explicitly.
      velocity_[i] = momentum_ * velocity_[i] + gradient;
      parameters[i] -= learning_rate * (nesterov_ ? gradient + momentum_ * velocity_[i] : velocity_[i]);
    }
  }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {{"velocity", &velocity_}}; }

 private:
  float momentum_;
  bool nesterov_;
  std::vector<float> velocity_;
};

}  // namespace

std::unique_ptr<Optimizer> make_momentum(const OptimizerConfig& config, std::size_t size,
                                         std::vector<std::uint8_t> mask) {
  return std::make_unique<Momentum>(config, size, std::move(mask));
}

}  // namespace pstrain::optim
