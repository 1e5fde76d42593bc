#include "modes/exchanges.h"

#include <algorithm>
#include <vector>

namespace pstrain::modes {

namespace {

class LocalExchange final : public exchange::GradientExchange {
 public:
  LocalExchange(std::unique_ptr<optim::Optimizer> optimizer, std::span<const float> initial)
      : optimizer_(std::move(optimizer)), initial_(initial.begin(), initial.end()) {}
  void start(std::span<float> parameters) override { std::ranges::copy(initial_, parameters.begin()); }
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace&, std::span<float> parameters,
            int&) override {
    if (count > 0) optimizer_->step(parameters, gradient);
  }
  optim::Optimizer* own_optimizer() override { return optimizer_.get(); }
  void finish_pass(std::span<float>) override {}
  void finish() override {}

 private:
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::vector<float> initial_;
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_local_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                                std::span<const float> initial) {
  return std::make_unique<LocalExchange>(std::move(optimizer), initial);
}

}  // namespace pstrain::modes
