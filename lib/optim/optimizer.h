#pragma once
// Optimizers over plain host spans: a server shard runs one on its slice, a local (single-rank) trainer on
// the whole flat vector. Each call to step() is one update with an already-averaged gradient.
//
// lr below is the scheduled learning rate of the update (see OptimizerConfig::schedule).
//   sgd:      g' = g + wd*w;                                   w -= lr * g'
//   momentum: g' = g + wd*w;  v = mu*v + g';                   w -= lr * v            (PyTorch's form)
//   adam:     g' = g + wd*w;  m = b1*m + (1-b1)g'; v = b2*v + (1-b2)g'^2;
//             w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)                   (t = step count, from 1)
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pstrain::optim {

struct OptimizerConfig {
  std::string kind = "sgd";  // sgd | momentum | adam
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  // Learning-rate schedule over the optimizer's own updates: "constant", or "cosine" from learning_rate at the
  // first update down to 0 after total_updates (then it stays at 0).
  std::string schedule = "constant";
  std::uint64_t total_updates = 0;
};

// The learning rate of update number `update` (1-based) under `config`'s schedule.
float scheduled_learning_rate(const OptimizerConfig& config, std::uint64_t update);

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  virtual void step(std::span<float> parameters, std::span<const float> gradients) = 0;

  // State for checkpoints: named float vectors of the same length as the parameters ("velocity", "m", "v")
  // plus the step count.
  virtual std::vector<std::pair<std::string, std::vector<float>*>> state() = 0;
  virtual std::uint64_t steps_taken() const = 0;
  virtual void set_steps_taken(std::uint64_t steps) = 0;
};

// `size` is the number of parameters this optimizer will update (the shard's slice length).
// Throws pstrain::Error(kUsage) for an unknown kind.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::size_t size);

}  // namespace pstrain::optim
