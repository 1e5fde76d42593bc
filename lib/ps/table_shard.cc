#include "ps/table_shard.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace pstrain::ps {

using comm::WindowLock;

TableShard::TableShard(TableWindows& windows, const TablePlan& plan, std::size_t table, const comm::WorldLayout& layout,
                       std::unique_ptr<optim::RowOptimizer> optimizer)
    : windows_(windows),
      plan_(plan),
      table_(table),
      layout_(layout),
      width_(plan.table(table).width),
      capacity_(plan.capacity(table, layout.shard_index)),
      optimizer_(std::move(optimizer)),
      position_(plan.rows(table).rows_on(layout.shard_index), -1) {}

void TableShard::fill_rows(const std::function<void(std::span<float>)>& fill) {
  WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kExclusive);
  fill(windows_.local_rows(table_));
}

void TableShard::update(std::span<const float> weights) {
  const int self = layout_.world_rank;
  touched_.clear();
  summed_.clear();
  {
    WindowLock ids_lock(windows_.row_ids(), self, WindowLock::Mode::kShared);
    WindowLock grads_lock(windows_.row_grads(), self, WindowLock::Mode::kShared);
    for (std::size_t trainer = 0; trainer < weights.size(); ++trainer) {
      const float weight = weights[trainer];
      if (weight == 0) continue;
      const std::int64_t* ids = windows_.local_slot_ids(table_, static_cast<int>(trainer)).data();
      const float* gradients = windows_.local_slot_grads(table_, static_cast<int>(trainer)).data();
      PSTRAIN_ASSERT(ids[0] >= 0 && static_cast<std::size_t>(ids[0]) <= capacity_, "trainer ", trainer, " sent ",
                     ids[0], " rows for a slot of ", capacity_);
      for (std::int64_t k = 0; k < ids[0]; ++k) {
        const auto local = static_cast<std::size_t>(ids[1 + k]);
        PSTRAIN_ASSERT(local < position_.size(), "row ", local, " outside this shard's ", position_.size());
        const float* row = gradients + static_cast<std::size_t>(k) * width_;
        if (position_[local] < 0) {  // the first trainer to touch it: as the dense sum's first term
          position_[local] = static_cast<std::int32_t>(touched_.size());
          touched_.push_back(static_cast<std::uint32_t>(local));
          for (std::size_t j = 0; j < width_; ++j) summed_.push_back(weight * row[j]);
        } else {
          float* sum = summed_.data() + static_cast<std::size_t>(position_[local]) * width_;
          for (std::size_t j = 0; j < width_; ++j) sum[j] += weight * row[j];
        }
      }
    }
  }
  {
    WindowLock lock(windows_.rows(), self, WindowLock::Mode::kExclusive);
    optimizer_->step(windows_.local_rows(table_), touched_,
                     summed_);  // every step, touched or not: the schedule's count
  }
  for (const std::uint32_t local : touched_) position_[local] = -1;
  rows_updated_ += touched_.size();
}

void TableShard::visit_rows(const RowsVisitor& use) {
  WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kShared);
  std::vector<std::pair<std::string, std::span<const float>>> state;
  for (const auto& [name, values] : optimizer_->state()) state.emplace_back(name, *values);
  use(windows_.local_rows(table_), state);
}

void TableShard::load_rows(const RowsLoader& load, std::uint64_t steps) {
  {
    WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kExclusive);
    std::vector<std::pair<std::string, std::span<float>>> state;
    for (const auto& [name, values] : optimizer_->state()) state.emplace_back(name, *values);
    load(windows_.local_rows(table_), state);
  }
  optimizer_->set_steps_taken(steps);
}

}  // namespace pstrain::ps
