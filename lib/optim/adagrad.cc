// adagrad (PyTorch's defaults: no learning-rate decay, accumulator starting at 0):
//   g' = g + wd*w;  s = s + g'^2;  w -= lr * g' / (sqrt(s) + eps)      eps = kAdagradEpsilon (1e-10)
// The optimizer of the seed's PaddlePaddle word2vec example; rows of sparse tables use the same rule
// (row_optimizers.cc), so that a table updated sparsely and one updated densely agree where both apply.
#include <cmath>

#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

class Adagrad final : public OptimizerBase {
 public:
  Adagrad(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask)
      : OptimizerBase(config, size, std::move(mask)), sum_(size, 0.0f) {}

  std::string name() const override { return "adagrad"; }
  // g = 0 and no decay: w -= lr * 0 (and adagrad's sum += 0) leave every bit as it was.
  bool zero_gradient_keeps_parameters() const override { return config().weight_decay == 0.0f; }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {{"sum", &sum_}}; }

 private:
  void update_elements(std::size_t first, std::span<float> parameters, std::span<const float> gradients) override {
    const float learning_rate = this->learning_rate();
    float* const sum = sum_.data() + first;
    with_weight_decay(first, [&](auto decay) {
      for (std::size_t i = 0; i < parameters.size(); ++i) {
        const float gradient = gradients[i] + decay(i) * parameters[i];
        sum[i] += gradient * gradient;
        parameters[i] -= learning_rate * gradient / (std::sqrt(sum[i]) + kAdagradEpsilon);
      }
    });
  }

  std::vector<float> sum_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adagrad(const OptimizerConfig& config, std::size_t size,
                                        std::vector<std::uint8_t> mask) {
  return std::make_unique<Adagrad>(config, size, std::move(mask));
}

}  // namespace pstrain::optim
