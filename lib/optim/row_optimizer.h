#pragma once
// Optimizers for the rows of a sparse table: an embedding table whose rows live on the parameter servers by row
// id (ps/row_plan.h), of which a step touches only the rows its batches looked up. A step updates those rows and
// nothing else; PyTorch's sparse gradients and optimizers are the reference for what that means per kind:
//   sgd:      a touched row moves as under dense SGD. Untouched rows stay, where dense SGD would move them by
//             weight decay alone: with --weight-decay 0 sparse and dense SGD give the same bits.
//   adagrad:  a touched row and its accumulator as under dense Adagrad (PyTorch's Adagrad with sparse gradients);
//             untouched accumulators stay, as they do densely when weight decay is 0.
//   rowwise_adagrad: one accumulator per row, grown by the mean square of the row's gradient (optimizer.h); it
//             has no dense counterpart on a table, so it runs only where the servers hold the tables by rows.
//   momentum: lazy: a touched row's velocity and weights as under dense momentum; an untouched row keeps both,
//             where dense momentum would keep moving it by mu * v (TensorFlow's lazy optimizers' rule).
//   adam:     lazy, PyTorch's SparseAdam: m, v and the weights of touched rows; the bias correction counts every
//             step of the table (touched or not), as SparseAdam's step count does.
// Weight decay, when set, applies to touched rows only. The learning-rate schedule is the dense optimizer's,
// over the same update count.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "optim/optimizer.h"

namespace pstrain::optim {

class RowOptimizer {
 public:
  virtual ~RowOptimizer() = default;
  virtual std::string name() const = 0;
  // One update. `table`: this shard's rows, `width` floats each; `rows`: distinct local row indices; `gradients`:
  // one row of `width` floats per index, in the same order (already summed over trainers).
  virtual void step(std::span<float> table, std::span<const std::uint32_t> rows, std::span<const float> gradients) = 0;
  // State for checkpoints, row by row like the table: per element ("sum", "velocity", "m", "v": rows x width) or
  // per row ("row_sum": rows x 1).
  virtual std::vector<std::pair<std::string, std::vector<float>*>> state() = 0;
  virtual std::uint64_t steps_taken() const = 0;
  virtual void set_steps_taken(std::uint64_t steps) = 0;
};

// For a table slice of `rows` x `width`. Throws pstrain::Error(kUsage) as make_optimizer does.
std::unique_ptr<RowOptimizer> make_row_optimizer(const OptimizerConfig& config, std::size_t rows, std::size_t width);
// Not an optimizer of --optimizer's: the rows' counterpart of make_change_adder (--mode geo), which adds the
// trainers' summed, sample-weighted changes to the rows they changed.
std::unique_ptr<RowOptimizer> make_row_change_adder(std::size_t rows, std::size_t width);

}  // namespace pstrain::optim
