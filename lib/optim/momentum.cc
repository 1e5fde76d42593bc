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

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {{"velocity", &velocity_}}; }

 private:
  void update_elements(std::size_t first, std::span<float> parameters, std::span<const float> gradients) override {
    const float learning_rate = this->learning_rate();
    float* const velocity = velocity_.data() + first;
    with_weight_decay(first, [&](auto decay) {
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        const float gradient = gradients[i] + decay(i) * parameters[i];
        // With v starting at 0 the first step gives v = g', which is what PyTorch does explicitly.
        velocity[i] = momentum_ * velocity[i] + gradient;
        parameters[i] -= learning_rate * (nesterov_ ? gradient + momentum_ * velocity[i] : velocity[i]);
      }
    });
  }

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
