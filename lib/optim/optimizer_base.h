#pragma once
// Internal to pstrain_optim: bookkeeping shared by every optimizer, and one constructor per kind for the
// factory. Configurations reaching these constructors are already validated.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "optim/optimizer.h"

namespace pstrain::optim {

class OptimizerBase : public Optimizer {
 public:
  OptimizerBase(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> decay_mask);
  std::size_t size() const override { return size_; }
  std::uint64_t steps_taken() const override { return steps_; }
  void set_steps_taken(std::uint64_t steps) override { steps_ = steps; }
  void begin_update() final;
  // Checks that the range lies in the slice this optimizer was built for, then update_elements().
  void update_range(std::size_t first, std::span<float> parameters, std::span<const float> gradients) final;

 protected:
  // The update begun last is number `update` (1 on the first), which Adam's bias correction needs.
  virtual void prepare_update(std::uint64_t update) { static_cast<void>(update); }
  // The update of elements [first, first + parameters.size()) of the slice: w[i] is element first + i.
  virtual void update_elements(std::size_t first, std::span<float> parameters, std::span<const float> gradients) = 0;
  // The learning rate of the update begun last.
  float learning_rate() const { return learning_rate_; }
  const OptimizerConfig& config() const { return config_; }
  // Calls loop(decay) with decay(i) the weight decay of element first + i (config.weight_decay unless the decay
  // mask leaves the element out), as a function without a test of the mask inside: a loop over the elements
  // that calls it vectorises. With every element decayed it is exactly config.weight_decay.
  template <typename Loop>
  void with_weight_decay(std::size_t first, Loop&& loop) const {
    const float decay = config_.weight_decay;
    if (decay_mask_.empty()) {
      loop([decay](std::size_t) { return decay; });
    } else {
      loop([decay, mask = decay_mask_.data() + first](std::size_t i) { return mask[i] != 0 ? decay : 0.0f; });
    }
  }

 private:
  OptimizerConfig config_;
  std::size_t size_;
  std::vector<std::uint8_t> decay_mask_;  // empty: every element decays
  std::uint64_t steps_ = 0;
  float learning_rate_ = 0;
};

std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask);
std::unique_ptr<Optimizer> make_momentum(const OptimizerConfig& config, std::size_t size,
                                         std::vector<std::uint8_t> mask);
std::unique_ptr<Optimizer> make_adagrad(const OptimizerConfig& config, std::size_t size,
                                        std::vector<std::uint8_t> mask);
std::unique_ptr<Optimizer> make_adam(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask);

}  // namespace pstrain::optim
