#include "ps/server.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"

namespace pstrain::ps {

using comm::WindowLock;

ShardServer::ShardServer(PsWindows& windows, const ShardPlan& plan, const comm::WorldLayout& layout,
                         std::unique_ptr<optim::Optimizer> optimizer, std::span<const float> initial)
    : windows_(windows),
      layout_(layout),
      slice_size_(plan.shard_size(layout.shard_index)),
      optimizer_(std::move(optimizer)),
      summed_(slice_size_) {
  const int self = layout_.world_rank;
  {
    WindowLock lock(windows_.params.handle(), self, WindowLock::Mode::kExclusive);
    auto memory = windows_.params.local();
    write_version(memory.data(), 0);
    PSTRAIN_ASSERT(initial.size() == slice_size_, initial.size(), " starting values for a slice of ", slice_size_);
    std::ranges::copy(initial, memory.subspan(kParamsHeader).begin());
  }
  {
    WindowLock lock(windows_.grads.handle(), self, WindowLock::Mode::kExclusive);
    std::ranges::fill(windows_.grads.local(), 0.0f);
  }
  WindowLock lock(windows_.control.handle(), self, WindowLock::Mode::kExclusive);
  std::ranges::fill(windows_.control.local(), 0);
}

void ShardServer::apply(std::span<const float> gradient) {
  WindowLock lock(windows_.params.handle(), layout_.world_rank, WindowLock::Mode::kExclusive);
  auto memory = windows_.params.local();
  optimizer_->step(memory.subspan(kParamsHeader, slice_size_), gradient);
  write_version(memory.data(), ++version_);
  ++stats_.updates;
}

int ShardServer::sync_step(int flags) {
  const comm::Watchdog::Wait wait("a sync step (waiting for the trainers' gradients)");
  const int self = layout_.world_rank;
  const std::size_t stride = slot_stride(slice_size_);
  {
    exchange::all_gradients_written();
    const auto start = Clock::now();
    {
      WindowLock lock(windows_.grads.handle(), self, WindowLock::Mode::kShared);
      const auto slots = windows_.grads.local();
      // The average of the trainers' mean gradients weighted by their sample counts, accumulated in trainer
      // order: the same bits on every run. One pass over each slot.
      float total = 0;
      for (int trainer = 0; trainer < layout_.trainers; ++trainer) total += slots[trainer * stride + slice_size_];
      PSTRAIN_ASSERT(total > 0, "no samples in sync update ", version_ + 1);
      weights_.resize(static_cast<std::size_t>(layout_.trainers));
      bool first = true;
      for (int trainer = 0; trainer < layout_.trainers; ++trainer) {
        const float* slot = slots.data() + trainer * stride;
        const float weight = slot[slice_size_] / total;
        weights_[static_cast<std::size_t>(trainer)] = weight;
        if (weight == 0) continue;
        if (first) {
          for (std::size_t i = 0; i < slice_size_; ++i) summed_[i] = weight * slot[i];
        } else {
          for (std::size_t i = 0; i < slice_size_; ++i) summed_[i] += weight * slot[i];
        }
        first = false;
      }
    }
    apply(summed_);
    for (const auto& table : tables_) table->update(weights_);
    stats_.busy_seconds += seconds_since(start);
  }
  return exchange::agree_on_step_flags(flags);  // doubles as the meeting after which the parameters are published
}

SliceState ShardServer::export_state() {
  SliceState state;
  {
    WindowLock lock(windows_.params.handle(), layout_.world_rank, WindowLock::Mode::kShared);
    const auto slice = windows_.params.local().subspan(kParamsHeader, slice_size_);
    state.parameters.assign(slice.begin(), slice.end());
  }
  for (const auto& [name, values] : optimizer_->state()) state.optimizer.emplace_back(name, *values);
  state.optimizer_steps = optimizer_->steps_taken();
  for (const auto& table : tables_) state.tables.push_back(table.get());
  return state;
}

void ShardServer::import_state(const ModelPartition& partition, std::span<const float> parameters,
                               const std::vector<std::pair<std::string, std::vector<float>>>& optimizer,
                               std::uint64_t steps) {
  {
    WindowLock lock(windows_.params.handle(), layout_.world_rank, WindowLock::Mode::kExclusive);
    partition.gather_dense(layout_.shard_index, parameters,
                           windows_.params.local().subspan(kParamsHeader, slice_size_));
  }
  for (const auto& [name, target] : optimizer_->state()) {
    // Captured through an init-capture: clang before 16 cannot capture a structured binding itself.
    const auto found = std::find_if(optimizer.begin(), optimizer.end(),
                                    [&wanted = name](const auto& entry) { return entry.first == wanted; });
    PSTRAIN_ASSERT(found != optimizer.end(), "checkpoint lacks optimizer state ", name);
    partition.gather_dense(layout_.shard_index, found->second, *target);
  }
  optimizer_->set_steps_taken(steps);
}

void ShardServer::clear_checkpoint_request() {
  WindowLock lock(windows_.control.handle(), layout_.world_rank, WindowLock::Mode::kExclusive);
  windows_.control.local()[kCheckpointRequestIndex] = 0;
  windows_.control.local()[kQuiescedIndex] = 0;
}

ShardServer::AsyncOutcome ShardServer::serve_async(std::chrono::microseconds poll_interval) {
  const int self = layout_.world_rank;
  const std::size_t stride = slot_stride(slice_size_);
  std::vector<std::int64_t> control(control_size(layout_.trainers));
  applied_.resize(static_cast<std::size_t>(layout_.trainers), 0);
  std::vector<std::int64_t>& applied = applied_;
  std::optional<comm::Watchdog::Wait> idle;  // armed while no trainer pushes anything
  for (;;) {
    {
      WindowLock lock(windows_.control.handle(), self, WindowLock::Mode::kExclusive);
      std::ranges::copy(windows_.control.local(), control.begin());
    }
    bool applied_any = false;
    std::vector<std::int64_t> staleness(layout_.trainers, 0);
    for (int trainer = 0; trainer < layout_.trainers; ++trainer) {
      const std::int64_t pushed = control[control_index(trainer, kPushedSeq)];
      if (pushed <= applied[trainer]) continue;
      const auto start = Clock::now();
      staleness[trainer] = version_ - control[control_index(trainer, kBaseVersion)];
      {
        WindowLock lock(windows_.grads.handle(), self, WindowLock::Mode::kShared);
        const float* slot = windows_.grads.local().data() + trainer * stride;
        if (slot[slice_size_] > 0) {
          apply({slot, slice_size_});
          weights_.assign(static_cast<std::size_t>(layout_.trainers), 0.0f);  // this trainer's push alone
          weights_[static_cast<std::size_t>(trainer)] = 1.0f;
          for (const auto& table : tables_) table->update(weights_);
        }
      }
      applied[trainer] = pushed;
      applied_any = true;
      stats_.busy_seconds += seconds_since(start);
    }
    if (applied_any) {
      idle.reset();
      WindowLock lock(windows_.control.handle(), self, WindowLock::Mode::kExclusive);
      auto memory = windows_.control.local();
      for (int trainer = 0; trainer < layout_.trainers; ++trainer) {
        if (memory[control_index(trainer, kAppliedSeq)] == applied[trainer]) continue;
        memory[control_index(trainer, kStaleness)] = staleness[trainer];
        memory[control_index(trainer, kAppliedSeq)] = applied[trainer];
      }
      continue;  // more may have arrived while we applied
    }
    if (control[kDoneIndex] == layout_.trainers) return AsyncOutcome::kDone;  // announced after the last push
    // A checkpoint request lives on shard 0; the others look there (only when idle: trainers that quiesce stop
    // pushing, so every server comes here).
    std::int64_t words[2] = {control[kCheckpointRequestIndex], control[kQuiescedIndex]};
    if (self != 0) {
      WindowLock lock(windows_.control.handle(), 0, WindowLock::Mode::kShared);
      MPI_CHECK(MPI_Get(words, 2, MPI_INT64_T, 0, kCheckpointRequestIndex, 2, MPI_INT64_T, windows_.control.handle()));
    }
    if (words[0] != 0 && words[1] == layout_.trainers) {
      checkpoint_request_ = words[0];
      return AsyncOutcome::kCheckpoint;
    }
    if (!idle) idle.emplace("the server loop, no trainer pushing anything");
    std::this_thread::sleep_for(poll_interval);
  }
}

}  // namespace pstrain::ps
