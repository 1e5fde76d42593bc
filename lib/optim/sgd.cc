// sgd: g' = g + wd*w;  w -= lr * g'
#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

class Sgd final : public OptimizerBase {
 public:
  Sgd(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask)
      : OptimizerBase(config, size, std::move(mask)) {}

  std::string name() const override { return "sgd"; }
  // g = 0 and no decay: w -= lr * 0 (and adagrad's sum += 0) leave every bit as it was.
  bool zero_gradient_keeps_parameters() const override { return config().weight_decay == 0.0f; }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {}; }  // stateless

 private:
  void update_elements(std::size_t first, std::span<float> parameters, std::span<const float> gradients) override {
    const float learning_rate = this->learning_rate();
    with_weight_decay(first, [&](auto decay) {
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        const float gradient = gradients[i] + decay(i) * parameters[i];
        parameters[i] -= learning_rate * gradient;
      }
    });
  }
};

}  // namespace

std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask) {
  return std::make_unique<Sgd>(config, size, std::move(mask));
}

}  // namespace pstrain::optim
