// The update of a shard whose trainers run the optimizer themselves (--mode geo): it adds what it is given, the
// trainers' sample-weighted mean change since they last met the servers; on the rows of the tables the servers hold
// by rows, the same for the rows the trainers changed.
#include "core/error.h"
#include "optim/optimizer_base.h"
#include "optim/row_optimizer.h"

namespace pstrain::optim {

namespace {

class ChangeAdder final : public OptimizerBase {
 public:
  explicit ChangeAdder(std::size_t size) : OptimizerBase(OptimizerConfig{}, size, {}) {}

  std::string name() const override { return "add the trainers' changes"; }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {}; }  // stateless

 private:
  void update_elements(std::size_t, std::span<float> parameters, std::span<const float> changes) override {
    for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i] += changes[i];
  }
};

class RowChangeAdder final : public RowOptimizer {
 public:
  RowChangeAdder(std::size_t rows, std::size_t width) : rows_(rows), width_(width) {}

  std::string name() const override { return "add the trainers' changes to the rows"; }

  // The dense adder's expression (w += d), so a row changed here and the same row of a table added to whole get the
  // same bits.
  void step(std::span<float> table, std::span<const std::uint32_t> rows, std::span<const float> changes) override {
    PSTRAIN_ASSERT(table.size() == rows_ * width_ && changes.size() == rows.size() * width_, name(), " for ", rows_,
                   " x ", width_, " got ", table.size(), " floats and ", changes.size(), " changes");
    ++steps_;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      PSTRAIN_ASSERT(rows[k] < rows_, "row ", rows[k], " outside a table slice of ", rows_, " rows");
      float* row = table.data() + static_cast<std::size_t>(rows[k]) * width_;
      for (std::size_t j = 0; j < width_; ++j) row[j] += changes[k * width_ + j];
    }
  }

  std::vector<std::pair<std::string, std::vector<float>*>> state() override { return {}; }  // stateless
  std::uint64_t steps_taken() const override { return steps_; }
  void set_steps_taken(std::uint64_t steps) override { steps_ = steps; }

 private:
  std::size_t rows_;
  std::size_t width_;
  std::uint64_t steps_ = 0;
};

}  // namespace

std::unique_ptr<RowOptimizer> make_row_change_adder(std::size_t rows, std::size_t width) {
  return std::make_unique<RowChangeAdder>(rows, width);
}

std::unique_ptr<Optimizer> make_change_adder(std::size_t size) {
  return std::make_unique<ChangeAdder>(size);
}

}  // namespace pstrain::optim
