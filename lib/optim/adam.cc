// adam: g' = g + wd*w;  m = b1*m + (1-b1)g';  v = b2*v + (1-b2)g'^2;
//       w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)      (t = step count, from 1)
#include <cmath>

#include "optim/optimizer_base.h"

namespace pstrain::optim {
namespace {

class Adam final : public OptimizerBase {
 public:
  Adam(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask)
      : OptimizerBase(config, size, std::move(mask)),
        beta1_(config.beta1),
        beta2_(config.beta2),
        epsilon_(config.epsilon),
        m_(size, 0.0f),
        v_(size, 0.0f) {}

  std::string name() const override { return "adam"; }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {{"m", &m_}, {"v", &v_}}; }

 private:
  void prepare_update(std::uint64_t update) override {
    // The bias corrections are per-update scalars; computing them in double keeps 1 - b^t accurate when b^t is
    // close to 1 (early updates with b2 = 0.999).
    const auto t = static_cast<double>(update);
    inverse_correction1_ = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta1_), t)));
    inverse_correction2_ = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta2_), t)));
  }

  void update_elements(std::size_t first, std::span<float> parameters, std::span<const float> gradients) override {
    const float learning_rate = this->learning_rate();
    // Raw pointers and locals, the decay without a branch: written so, the loop vectorises (element by element
    // the same operations in the same order as the scalar form, so the same bits).
    float* const w = parameters.data();
    const float* const g = gradients.data();
    float* const m = m_.data() + first;
    float* const v = v_.data() + first;
    const std::size_t n = parameters.size();
    const float beta1 = beta1_, beta2 = beta2_, epsilon = epsilon_;
    const float inverse_correction1 = inverse_correction1_, inverse_correction2 = inverse_correction2_;
    with_weight_decay(first, [&](auto decay) {
      for (std::size_t i = 0; i < n; ++i) {
        const float gradient = g[i] + decay(i) * w[i];
        const float m_i = beta1 * m[i] + (1.0f - beta1) * gradient;
        const float v_i = beta2 * v[i] + (1.0f - beta2) * gradient * gradient;
        m[i] = m_i;
        v[i] = v_i;
        w[i] -= learning_rate * (m_i * inverse_correction1) / (std::sqrt(v_i * inverse_correction2) + epsilon);
      }
    });
  }

  float beta1_;
  float beta2_;
  float epsilon_;
  std::vector<float> m_;
  std::vector<float> v_;
  float inverse_correction1_ = 1;
  float inverse_correction2_ = 1;
};

}  // namespace

std::unique_ptr<Optimizer> make_adam(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask) {
  return std::make_unique<Adam>(config, size, std::move(mask));
}

}  // namespace pstrain::optim
