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
  std::uint64_t steps_taken() const override { return steps_; }
  void set_steps_taken(std::uint64_t steps) override { steps_ = steps; }

 protected:
  // Checks that both spans match the size this optimizer was built for and counts the step; returns the new
  // step count (1 on the first call), which Adam's bias correction needs.
  std::uint64_t begin_step(std::span<const float> parameters, std::span<const float> gradients);
  std::size_t size() const { return size_; }
  // The learning rate of the step begun last.
  float learning_rate() const { return scheduled_learning_rate(config_, steps_); }
  // The weight decay of element i: config.weight_decay unless the decay mask leaves the element out. With every
  // element decayed it is exactly config.weight_decay, so results do not change bit for bit.
  float weight_decay(std::size_t i) const {
    return decay_mask_.empty() || decay_mask_[i] != 0 ? config_.weight_decay : 0.0f;
  }
  // Calls loop(decay) with decay(i) == weight_decay(i), as a function without a test of the mask inside: a loop
  // over the elements that calls it vectorises (the mask test in weight_decay(i) keeps Adam's loop scalar).
  template <typename Loop>
  void with_weight_decay(Loop&& loop) const {
    const float decay = config_.weight_decay;
    if (decay_mask_.empty()) {
      loop([decay](std::size_t) { return decay; });
    } else {
      loop([decay, mask = decay_mask_.data()](std::size_t i) { return mask[i] != 0 ? decay : 0.0f; });
    }
  }

 private:
  OptimizerConfig config_;
  std::size_t size_;
  std::vector<std::uint8_t> decay_mask_;  // empty: every element decays
  std::uint64_t steps_ = 0;
};

std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask);
std::unique_ptr<Optimizer> make_momentum(const OptimizerConfig& config, std::size_t size,
                                         std::vector<std::uint8_t> mask);
std::unique_ptr<Optimizer> make_adagrad(const OptimizerConfig& config, std::size_t size,
                                        std::vector<std::uint8_t> mask);
std::unique_ptr<Optimizer> make_adam(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> mask);

}  // namespace pstrain::optim
