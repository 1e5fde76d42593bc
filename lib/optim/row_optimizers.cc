// The row optimizers of row_optimizer.h: one rule per kind, applied element by element to the touched rows with
// the same expressions, in the same order, as the dense optimizers (sgd.cc, adagrad.cc, momentum.cc, adam.cc), so
// that a touched row gets the bits a dense update would give it.
#include <cmath>

#include <vector>

#include "core/error.h"
#include "optim/row_optimizer.h"

namespace pstrain::optim {
namespace {

class RowOptimizerBase : public RowOptimizer {
 public:
  // `state_widths`: the floats per row of each state vector (the row's width, or 1 for a per-row state).
  RowOptimizerBase(const OptimizerConfig& config, std::size_t rows, std::size_t width,
                   const std::vector<std::size_t>& state_widths)
      : config_(config), rows_(rows), width_(width) {
    for (const std::size_t floats : state_widths) state_.emplace_back(rows * floats, 0.0f);
  }

  void step(std::span<float> table, std::span<const std::uint32_t> rows, std::span<const float> gradients) final {
    PSTRAIN_ASSERT(table.size() == rows_ * width_ && gradients.size() == rows.size() * width_, name(),
                   " row optimizer for ", rows_, " x ", width_, " got a table of ", table.size(), " floats and ",
                   rows.size(), " rows with ", gradients.size(), " gradient floats");
    ++steps_;
    const float learning_rate = scheduled_learning_rate(config_, steps_);
    prepare_step(steps_);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      PSTRAIN_ASSERT(rows[k] < rows_, "row ", rows[k], " outside a table slice of ", rows_, " rows");
      update_row(table.subspan(static_cast<std::size_t>(rows[k]) * width_, width_),
                 gradients.subspan(k * width_, width_), rows[k], learning_rate);
    }
  }

  std::uint64_t steps_taken() const final { return steps_; }
  void set_steps_taken(std::uint64_t steps) final { steps_ = steps; }

 protected:
  // One touched row (`row` indexes the state vectors by row) with its summed gradient, before weight decay.
  virtual void update_row(std::span<float> weights, std::span<const float> gradients, std::uint32_t row,
                          float learning_rate) = 0;
  virtual void prepare_step(std::uint64_t /*step*/) {}
  std::vector<float>& state_vector(int index) { return state_[static_cast<std::size_t>(index)]; }
  const OptimizerConfig& config() const { return config_; }
  std::size_t width() const { return width_; }

 private:
  OptimizerConfig config_;
  std::size_t rows_;
  std::size_t width_;
  std::vector<std::vector<float>> state_;
  std::uint64_t steps_ = 0;
};

// The optimizers whose rule is element by element, as their dense counterparts: a state vector per table element.
class ElementwiseRowOptimizer : public RowOptimizerBase {
 public:
  ElementwiseRowOptimizer(const OptimizerConfig& config, std::size_t rows, std::size_t width, int state_vectors)
      : RowOptimizerBase(config, rows, width,
                         std::vector<std::size_t>(static_cast<std::size_t>(state_vectors), width)) {}

 protected:
  // One element: `gradient` already includes weight decay; `at` indexes the state vectors.
  virtual void update(float& weight, float gradient, std::size_t at, float learning_rate) = 0;

 private:
  void update_row(std::span<float> weights, std::span<const float> gradients, std::uint32_t row,
                  float learning_rate) final {
    const std::size_t first = static_cast<std::size_t>(row) * width();
    for (std::size_t j = 0; j < weights.size(); ++j) {
      float& weight = weights[j];
      const float gradient = gradients[j] + config().weight_decay * weight;
      update(weight, gradient, first + j, learning_rate);
    }
  }
};

class RowSgd final : public ElementwiseRowOptimizer {
 public:
  RowSgd(const OptimizerConfig& config, std::size_t rows, std::size_t width)
      : ElementwiseRowOptimizer(config, rows, width, 0) {}
  std::string name() const override { return "sgd"; }
  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {}; }

 protected:
  void update(float& weight, float gradient, std::size_t, float learning_rate) override {
    weight -= learning_rate * gradient;
  }
};

class RowAdagrad final : public ElementwiseRowOptimizer {
 public:
  RowAdagrad(const OptimizerConfig& config, std::size_t rows, std::size_t width)
      : ElementwiseRowOptimizer(config, rows, width, 1) {}
  std::string name() const override { return "adagrad"; }
  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {{"sum", &state_vector(0)}}; }

 protected:
  void update(float& weight, float gradient, std::size_t at, float learning_rate) override {
    float& sum = state_vector(0)[at];
    sum += gradient * gradient;
    weight -= learning_rate * gradient / (std::sqrt(sum) + kAdagradEpsilon);
  }
};

// Row-wise Adagrad (FBGEMM's and TorchRec's EXACT_ROWWISE_ADAGRAD): one accumulator per row, half the memory of
// Adagrad's one per element on a table of width 1 and 1/W of it in general:
//   g' = g + wd*w;  s_r = s_r + mean_j(g'_j^2);  w_j -= lr * g'_j / (sqrt(s_r) + eps)     eps = kAdagradEpsilon
// The mean is summed in float, j = 0..W-1 in order, then divided by W: the same bits wherever the row is updated.
class RowRowwiseAdagrad final : public RowOptimizerBase {
 public:
  RowRowwiseAdagrad(const OptimizerConfig& config, std::size_t rows, std::size_t width)
      : RowOptimizerBase(config, rows, width, {1}), decayed_(width) {}
  std::string name() const override { return "row-wise adagrad"; }
  std::vector<std::pair<std::string, std::vector<float>*>> state() override {
    return {{kRowwiseAdagradState, &state_vector(0)}};
  }

 private:
  void update_row(std::span<float> weights, std::span<const float> gradients, std::uint32_t row,
                  float learning_rate) override {
    float squares = 0.0f;
    for (std::size_t j = 0; j < weights.size(); ++j) {
      decayed_[j] = gradients[j] + config().weight_decay * weights[j];
      squares += decayed_[j] * decayed_[j];
    }
    float& sum = state_vector(0)[row];
    sum += squares / static_cast<float>(weights.size());
    const float step = learning_rate / (std::sqrt(sum) + kAdagradEpsilon);
    for (std::size_t j = 0; j < weights.size(); ++j) weights[j] -= step * decayed_[j];
  }

  std::vector<float> decayed_;  // g' of the row being updated
};

class RowMomentum final : public ElementwiseRowOptimizer {
 public:
  RowMomentum(const OptimizerConfig& config, std::size_t rows, std::size_t width)
      : ElementwiseRowOptimizer(config, rows, width, 1) {}
  std::string name() const override { return config().nesterov ? "lazy nesterov" : "lazy momentum"; }
  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {{"velocity", &state_vector(0)}}; }

 protected:
  void update(float& weight, float gradient, std::size_t at, float learning_rate) override {
    float& velocity = state_vector(0)[at];
    const float momentum = config().momentum;
    velocity = momentum * velocity + gradient;
    weight -= learning_rate * (config().nesterov ? gradient + momentum * velocity : velocity);
  }
};

class RowAdam final : public ElementwiseRowOptimizer {
 public:
  RowAdam(const OptimizerConfig& config, std::size_t rows, std::size_t width)
      : ElementwiseRowOptimizer(config, rows, width, 2) {}
  std::string name() const override { return "lazy adam"; }
  std::vector<std::pair<std::string, std::vector<float>*>> state() override {
    return {{"m", &state_vector(0)}, {"v", &state_vector(1)}};
  }

 protected:
  void prepare_step(std::uint64_t step) override {
    // As adam.cc: the corrections in double, then as float.
    const auto t = static_cast<double>(step);
    inverse_correction1_ = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(config().beta1), t)));
    inverse_correction2_ = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(config().beta2), t)));
  }
  void update(float& weight, float gradient, std::size_t at, float learning_rate) override {
    float& m = state_vector(0)[at];
    float& v = state_vector(1)[at];
    const float beta1 = config().beta1;
    const float beta2 = config().beta2;
    m = beta1 * m + (1.0f - beta1) * gradient;
    v = beta2 * v + (1.0f - beta2) * gradient * gradient;
    const float m_hat = m * inverse_correction1_;
    const float v_hat = v * inverse_correction2_;
    weight -= learning_rate * m_hat / (std::sqrt(v_hat) + config().epsilon);
  }

 private:
  float inverse_correction1_ = 1.0f;
  float inverse_correction2_ = 1.0f;
};

}  // namespace

std::unique_ptr<RowOptimizer> make_row_optimizer(const OptimizerConfig& config, std::size_t rows, std::size_t width) {
  make_optimizer(config, 0);  // the same validation as the dense optimizers
  if (config.kind == "sgd") return std::make_unique<RowSgd>(config, rows, width);
  if (config.kind == "adagrad") return std::make_unique<RowAdagrad>(config, rows, width);
  if (config.kind == kRowwiseAdagrad) return std::make_unique<RowRowwiseAdagrad>(config, rows, width);
  if (config.kind == "momentum") return std::make_unique<RowMomentum>(config, rows, width);
  return std::make_unique<RowAdam>(config, rows, width);
}

}  // namespace pstrain::optim
