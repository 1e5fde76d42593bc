// sgd: g' = g + wd*w;  w -= lr * g'
#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

class Sgd final : public OptimizerBase {
 public:
  Sgd(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask)
      : OptimizerBase(config, size, std::move(mask)) {}

  std::string name() const override { return "sgd"; }

  void step(std::span<float> parameters, std::span<const float> gradients) override {
    begin_step(parameters, gradients);
    const float learning_rate = this->learning_rate();
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const float gradient = gradients[i] + weight_decay(i) * parameters[i];
      parameters[i] -= learning_rate * gradient;
    }
  }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {}; }  // stateless
};

}  // namespace

std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask) {
  return std::make_unique<Sgd>(config, size, std::move(mask));
}

}  // namespace pstrain::optim
