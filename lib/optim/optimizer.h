#pragma once
// Optimizers over plain host spans: a server shard runs one on its slice, a local (single-rank) trainer on
// the whole flat vector. Each call to step() is one update with an already-averaged gradient.
//
// lr below is the scheduled learning rate of the update (see OptimizerConfig::schedule). wd is the weight decay of
// the element: config.weight_decay, or 0 where the optimizer's decay mask says the element is not decayed.
//   sgd:      g' = g + wd*w;                                   w -= lr * g'
//   momentum: g' = g + wd*w;  v = mu*v + g';                   w -= lr * v            (PyTorch's form)
//   nesterov: g' = g + wd*w;  v = mu*v + g';                   w -= lr * (g' + mu*v)  (PyTorch's nesterov=True)
//   adagrad:  g' = g + wd*w;  s = s + g'^2;                  w -= lr * g' / (sqrt(s) + 1e-10)  (PyTorch's)
//   adam:     g' = g + wd*w;  m = b1*m + (1-b1)g'; v = b2*v + (1-b2)g'^2;
//             w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)                   (t = step count, from 1)
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pstrain::optim {

// Adagrad's epsilon, PyTorch's default: small enough that the first update is lr * sign(g).
inline constexpr float kAdagradEpsilon = 1e-10f;

// Adagrad with one accumulator per row of a table the servers hold by rows (row_optimizer.h), the CTR practice for
// tables far bigger than the rest of the model; every other parameter gets Adagrad's accumulator per element. Its
// state in a checkpoint's row files is named kRowwiseAdagradState, [rows x 1].
inline constexpr const char* kRowwiseAdagrad = "rowwise_adagrad";
inline constexpr const char* kRowwiseAdagradState = "row_sum";

struct OptimizerConfig {
  std::string kind = "sgd";  // sgd | momentum | adagrad | rowwise_adagrad | adam
  float learning_rate = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  // Learning-rate schedule over the optimizer's own updates. Update u (1-based) sits at position
  // p = (u - 1) / updates_per_pass passes into the run, and progress q = (u - 1) / total_updates:
  //   constant:  lr
  //   cosine:    lr * (1 + cos(pi * min(q, 1))) / 2                       (down to 0 at the end)
  //   piecewise: lr * (the factor interpolated linearly at p between lr_points[i] -> lr_factors[i]; before the
  //              first point the first factor, after the last point the last factor: numpy's interp)
  //   step:      lr * step_gamma ^ floor(p / step_passes)
  //   onecycle:  PyTorch OneCycleLR's shape over q (cosine both ways): from lr/25 up to lr at q = 0.3, then down
  //              to lr/25/1e4 at q = 1 (and there it stays)
  // Warm-up multiplies any of them by min(1, u / (warmup_passes * updates_per_pass)): linear from lr/W to lr.
  std::string schedule = "constant";
  std::uint64_t total_updates = 0;
  bool nesterov = false;  // momentum only
  // Decay the biases and batch-norm parameters too; when false, the caller passes make_optimizer a mask built
  // with decays() over the parameter names.
  bool decay_bias_and_norm = true;
  std::vector<double> lr_points{};     // piecewise: positions in passes, >= 0, strictly increasing
  std::vector<double> lr_factors{};    // piecewise: multipliers of learning_rate at those positions, >= 0
  double warmup_passes = 0;            // 0: no warm-up
  double step_passes = 0;              // step: passes between decays
  double step_gamma = 0.1;             // step: factor per decay, in (0, 1]
  std::uint64_t updates_per_pass = 0;  // total_updates / passes: the unit of piecewise, step and warm-up
};

// The learning rate of update number `update` (1-based) under `config`'s schedule.
float scheduled_learning_rate(const OptimizerConfig& config, std::uint64_t update);

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  // How many parameters it updates (a server's slice, a local trainer's whole vector).
  virtual std::size_t size() const = 0;
  // One update of every parameter.
  void step(std::span<float> parameters, std::span<const float> gradients);
  // The same update in pieces, so that a server can update the part of its slice whose gradients have arrived
  // while the rest is still on its way: begin_update() counts the update (and fixes its learning rate), then
  // update_range() is called on disjoint ranges [first, first + parameters.size()) of the slice that together
  // cover it, in any order. Element for element the arithmetic is step()'s, so the results are the same bits.
  virtual void begin_update() = 0;
  virtual void update_range(std::size_t first, std::span<float> parameters, std::span<const float> gradients) = 0;
  // True when an element whose gradient is zero keeps its value and its state bit for bit (sgd and adagrad without
  // weight decay): then an update may leave out the ranges whose gradient is zero (update_range on the others
  // only) and still give step()'s bits. A row table's untouched rows are such ranges (modes/local.cc).
  virtual bool zero_gradient_keeps_parameters() const { return false; }

  // State for checkpoints: named float vectors of the same length as the parameters ("velocity", "m", "v")
  // plus the step count.
  virtual std::vector<std::pair<std::string, std::vector<float>*>> state() = 0;
  virtual std::uint64_t steps_taken() const = 0;
  virtual void set_steps_taken(std::uint64_t steps) = 0;
};

// Whether weight decay applies to the parameter called `name` when biases and normalisation parameters are
// excluded: weights ("fc1.weight", "conv2.weight") decay; biases ("fc1.bias") and batch-norm scale and shift
// ("bn1.gamma", "bn1.beta") do not. The rule: the name ends with ".weight".
bool decays(const std::string& name);

// `size` is the number of parameters this optimizer will update (the shard's slice length). `decay_mask`, when
// not empty, has one entry per element of that slice: weight decay applies where it is non-zero.
// Throws pstrain::Error(kUsage) for an unknown kind or a bad setting.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, std::size_t size,
                                          std::vector<std::uint8_t> decay_mask = {});

// Not an optimizer of --optimizer's: the update of a shard whose trainers run the optimizer themselves (--mode geo),
// which adds what it is given (w += d) to its slice: the trainers' sample-weighted mean change.
std::unique_ptr<Optimizer> make_change_adder(std::size_t size);

}  // namespace pstrain::optim
