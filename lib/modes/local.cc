#include "modes/exchanges.h"

#include <algorithm>
#include <vector>

#include "core/error.h"
#include "core/timing.h"

namespace pstrain::modes {

namespace {

class LocalExchange final : public exchange::GradientExchange, public exchange::TouchedRowUpdates {
 public:
  LocalExchange(std::unique_ptr<optim::Optimizer> optimizer, std::span<const float> initial)
      : optimizer_(std::move(optimizer)), initial_(initial) {}
  void start(std::span<float> parameters) override { std::ranges::copy(initial_, parameters.begin()); }
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace&, std::span<float> parameters,
            int&) override {
    const auto start = Clock::now();
    if (count > 0 && touched_.empty()) optimizer_->step(parameters, gradient);
    if (count > 0 && !touched_.empty()) step_touched_rows(gradient, parameters);
    touched_.clear();
    timers_.update_seconds += seconds_since(start);
  }
  optim::Optimizer* own_optimizer() override { return optimizer_.get(); }
  void finish_pass(std::span<float>) override {}
  void finish() override {}

  // Only where leaving out a zero gradient gives the whole step's bits.
  exchange::TouchedRowUpdates* touched_row_updates() override {
    return optimizer_->zero_gradient_keeps_parameters() ? this : nullptr;
  }
  void rows_touched(std::vector<nn::TouchedRows> tables) override { touched_ = std::move(tables); }

 private:
  // One update over every element but the tables' untouched rows, whose gradient is zero: each run of consecutive
  // touched rows, and what lies between the tables, is one update_range.
  void step_touched_rows(std::span<const float> gradient, std::span<float> parameters) {
    std::ranges::sort(touched_, {}, &nn::TouchedRows::offset);
    optimizer_->begin_update();
    const auto update = [&](std::size_t first, std::size_t size) {
      if (size > 0) optimizer_->update_range(first, parameters.subspan(first, size), gradient.subspan(first, size));
    };
    std::size_t done = 0;  // everything before it is updated or left out
    for (const nn::TouchedRows& table : touched_) {
      PSTRAIN_ASSERT(table.offset >= done && table.offset + table.size <= parameters.size(), "a row table at float ",
                     table.offset, " overlaps another or passes the ", parameters.size(), " parameters");
      update(done, table.offset - done);
      const std::span<const std::uint64_t> rows = table.rows;
      for (std::size_t i = 0; i < rows.size();) {
        std::size_t end = i + 1;
        while (end < rows.size() && rows[end] == rows[end - 1] + 1) ++end;
        PSTRAIN_ASSERT((rows[end - 1] + 1) * table.width <= table.size, "touched row ", rows[end - 1],
                       " outside its table");
        update(table.offset + rows[i] * table.width, (end - i) * table.width);
        i = end;
      }
      done = table.offset + table.size;
    }
    update(done, parameters.size() - done);
  }

  std::unique_ptr<optim::Optimizer> optimizer_;
  std::span<const float> initial_;        // the job's, until start()
  std::vector<nn::TouchedRows> touched_;  // for the step to come; empty: a whole step
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_local_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                                std::span<const float> initial) {
  return std::make_unique<LocalExchange>(std::move(optimizer), initial);
}

}  // namespace pstrain::modes
