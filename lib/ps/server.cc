#include "ps/server.h"

#include <algorithm>
#include <optional>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/poll_pause.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "ps/block_messages.h"

namespace pstrain::ps {

using comm::WindowLock;

ShardServer::ShardServer(PsWindows& windows, const ShardPlan& plan, const comm::WorldLayout& layout,
                         SyncTransport transport, MPI_Comm channel, std::unique_ptr<optim::Optimizer> optimizer,
                         std::span<const float> initial)
    : windows_(windows),
      layout_(layout),
      slice_size_(plan.shard_size(layout.shard_index)),
      optimizer_(std::move(optimizer)),
      transport_(transport),
      channel_(channel),
      summed_(slice_size_) {
  check_block_tags(channel, plan.blocks().size());
  for (std::size_t block = 0; block < plan.blocks().size(); ++block) {
    if (plan.blocks()[block].shard == layout.shard_index) blocks_.emplace_back(block, plan.blocks()[block].place);
  }
  const int self = layout_.world_rank;
  {
    WindowLock lock(windows_.params.handle(), self, WindowLock::Mode::kExclusive);
    auto memory = windows_.params.local();
    write_version(memory.data(), 0);
    PSTRAIN_ASSERT(initial.size() == slice_size_, initial.size(), " starting values for a slice of ", slice_size_);
    std::ranges::copy(initial, memory.subspan(kParamsHeader).begin());
  }
  WindowLock lock(windows_.grads.handle(), self, WindowLock::Mode::kExclusive);
  std::ranges::fill(windows_.grads.local(), 0.0f);
  // The control words start at 0 (ps/control_words.h).
}

void ShardServer::apply(std::span<const float> gradient) {
  WindowLock lock(windows_.params.handle(), layout_.world_rank, WindowLock::Mode::kExclusive);
  auto memory = windows_.params.local();
  optimizer_->step(memory.subspan(kParamsHeader, slice_size_), gradient);
  write_version(memory.data(), ++version_);
  ++stats_.updates;
}

int ShardServer::sync_step(int flags, std::int64_t global_step) {
  global_step_ = global_step;
  const comm::Watchdog::Wait wait("a sync step (waiting for the trainers' gradients)");
  // Streamed blocks come per trainer; a node's sum only one-sidedly (job/overlap_plan.cc chooses so).
  PSTRAIN_ASSERT(transport_ == SyncTransport::kOneSided || !layout_.aggregates_pushes(),
                 "a streamed sync step with node aggregation");
  return transport_ == SyncTransport::kStreamed ? streamed_step(flags) : one_sided_step(flags);
}

int ShardServer::one_sided_step(int flags) {
  exchange::all_gradients_written();
  const auto start = Clock::now();
  {
    WindowLock lock(windows_.grads.handle(), layout_.world_rank, WindowLock::Mode::kShared);
    const auto slots = windows_.grads.local();
    const std::size_t stride = slot_stride(slice_size_);
    std::vector<float> counts(static_cast<std::size_t>(layout_.push_slots()));  // one slot per push group
    for (std::size_t slot = 0; slot < counts.size(); ++slot) counts[slot] = slots[slot * stride + slice_size_];
    set_weights(counts);
    sum_range(0, slice_size_);
  }
  apply(summed_);
  if (!tables_.empty() && layout_.aggregates_pushes()) set_trainer_weights();  // the slots hold groups' sums
  update_tables();
  stats_.busy_seconds += seconds_since(start);
  return exchange::agree_on_step_flags(flags);  // doubles as the meeting after which the parameters are published
}

int ShardServer::streamed_step(int flags) {
  exchange::StepFlagAgreement agreement;
  if (tables_.empty()) agreement.begin(channel_, flags);
  stream_updates(receive_counts());
  if (tables_.empty()) return agreement.finish();
  exchange::all_gradients_written();  // every trainer's rows are in its row slots
  const auto start = Clock::now();
  update_tables();
  stats_.busy_seconds += seconds_since(start);
  return exchange::agree_on_step_flags(flags);  // doubles as the meeting after which the rows are published
}

// A sync step's rows: each table's touched rows updated, then a keyed table's meeting at this step (admissions,
// recency, evictions: TableShard::meet), in table order on every server.
void ShardServer::update_tables() {
  for (const auto& table : tables_) {
    table->update(weights_);
    table->meet(global_step_);
  }
}

int ShardServer::set_weights(std::span<const float> counts) {
  float total = 0;
  for (const float count : counts) total += count;  // in trainer order, as the sum
  PSTRAIN_ASSERT(total > 0, "no samples in sync update ", version_ + 1);
  weights_.resize(counts.size());
  int contributing = 0;
  for (std::size_t trainer = 0; trainer < counts.size(); ++trainer) {
    weights_[trainer] = counts[trainer] / total;
    if (weights_[trainer] != 0) ++contributing;
  }
  return contributing;
}

// With node aggregation the row slots stay per trainer, each weighted by its trainer's samples, which the trainers
// announced in their control words before the step's first meeting (ControlClient::announce_samples). The counts are
// whole numbers, so their float total is the same in any order: the weights are those of one slot per trainer.
void ShardServer::set_trainer_weights() {
  std::vector<std::int64_t> control(control_size(layout_.trainers));
  windows_.control.read(layout_.world_rank, 0, control);
  std::vector<float> counts(static_cast<std::size_t>(layout_.trainers));
  for (int trainer = 0; trainer < layout_.trainers; ++trainer) {
    counts[static_cast<std::size_t>(trainer)] = static_cast<float>(control[control_index(trainer, kSamples)]);
  }
  set_weights(counts);
}

int ShardServer::receive_counts() {
  std::vector<float> counts(static_cast<std::size_t>(layout_.trainers));
  std::vector<MPI_Request> requests(counts.size());
  for (int trainer = 0; trainer < layout_.trainers; ++trainer) {
    MPI_CHECK(MPI_Irecv(&counts[trainer], 1, MPI_FLOAT, layout_.trainer_rank(trainer), kCountTag, channel_,
                        &requests[trainer]));
  }
  MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  return set_weights(counts);
}

// The average of the trainers' mean gradients weighted by their sample counts, accumulated in trainer order: the
// same bits on every run, and the same for a block as for the whole slice at once. One pass over each slot.
void ShardServer::sum_range(std::size_t offset, std::size_t length) {
  const std::size_t stride = slot_stride(slice_size_);
  const float* const slots = windows_.grads.local().data();
  float* const summed = summed_.data() + offset;
  bool first = true;
  for (std::size_t trainer = 0; trainer < weights_.size(); ++trainer) {
    const float weight = weights_[trainer];
    if (weight == 0) continue;
    const float* slot = slots + trainer * stride + offset;
    if (first) {
      for (std::size_t i = 0; i < length; ++i) summed[i] = weight * slot[i];
    } else {
      for (std::size_t i = 0; i < length; ++i) summed[i] += weight * slot[i];
    }
    first = false;
  }
}

void ShardServer::stream_updates(int contributing) {
  const int self = layout_.world_rank;
  const auto trainers = static_cast<std::size_t>(layout_.trainers);
  const std::size_t stride = slot_stride(slice_size_);
  // Held for the whole step: the trainers reach neither window one-sidedly during a sync step.
  WindowLock grads_lock(windows_.grads.handle(), self, WindowLock::Mode::kExclusive);
  WindowLock params_lock(windows_.params.handle(), self, WindowLock::Mode::kExclusive);
  float* const slots = windows_.grads.local().data();
  receives_.assign(blocks_.size() * trainers, MPI_REQUEST_NULL);
  sends_.assign(blocks_.size() * trainers, MPI_REQUEST_NULL);
  arrived_.assign(blocks_.size(), 0);
  for (std::size_t mine = 0; mine < blocks_.size(); ++mine) {
    const auto& [block, place] = blocks_[mine];
    for (std::size_t trainer = 0; trainer < trainers; ++trainer) {
      if (weights_[trainer] == 0) continue;  // a trainer without samples sends no gradient
      MPI_CHECK(MPI_Irecv(slots + trainer * stride + place.local_offset, static_cast<int>(place.length), MPI_FLOAT,
                          layout_.trainer_rank(static_cast<int>(trainer)), block_tag(block), channel_,
                          &receives_[mine * trainers + trainer]));
    }
  }
  optimizer_->begin_update();
  std::vector<int> done(receives_.size());
  for (std::size_t updated = 0; updated < blocks_.size();) {
    int count = 0;
    MPI_CHECK(
        MPI_Waitsome(static_cast<int>(receives_.size()), receives_.data(), &count, done.data(), MPI_STATUSES_IGNORE));
    PSTRAIN_ASSERT(count != MPI_UNDEFINED, "a sync step ran out of blocks to wait for");
    for (int i = 0; i < count; ++i) {
      const std::size_t mine = static_cast<std::size_t>(done[i]) / trainers;
      if (++arrived_[mine] < contributing) continue;
      update_block(mine);
      ++updated;
    }
  }
  write_version(windows_.params.local().data(), ++version_);
  ++stats_.updates;
  MPI_CHECK(MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE));
}

void ShardServer::update_block(std::size_t mine) {
  const auto start = Clock::now();
  const Segment& place = blocks_[mine].second;
  const auto trainers = static_cast<std::size_t>(layout_.trainers);
  sum_range(place.local_offset, place.length);
  const float* const summed = summed_.data() + place.local_offset;
  float* const values = windows_.params.local().data() + kParamsHeader + place.local_offset;
  optimizer_->update_range(place.local_offset, {values, place.length}, {summed, place.length});
  for (std::size_t trainer = 0; trainer < trainers; ++trainer) {
    MPI_CHECK(MPI_Isend(values, static_cast<int>(place.length), MPI_FLOAT,
                        layout_.trainer_rank(static_cast<int>(trainer)), block_tag(blocks_[mine].first), channel_,
                        &sends_[mine * trainers + trainer]));
  }
  stats_.busy_seconds += seconds_since(start);
}

SliceState ShardServer::export_state() {
  SliceState state;
  {
    WindowLock lock(windows_.params.handle(), layout_.world_rank, WindowLock::Mode::kShared);
    const auto slice = windows_.params.local().subspan(kParamsHeader, slice_size_);
    state.parameter_copy.assign(slice.begin(), slice.end());
  }
  state.parameters = state.parameter_copy;
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
  const std::int64_t zeros[2] = {0, 0};
  static_assert(kQuiescedIndex == kCheckpointRequestIndex + 1);
  windows_.control.write(layout_.world_rank, kCheckpointRequestIndex, zeros);
}

// Protocol (exchange/step_protocol.h, async step): a trainer puts its slot (gradient, count, base version), then
// writes its pushed_seq here; the server sees pushed_seq move, applies the slot, and writes the staleness and then
// applied_seq, which the trainer polls (the words are atomic one by one, not together: the order says which
// one a reader may read after which).
// No lock on the control words is ever taken (ps/control_words.h), so no trainer's poll delays the server.
ShardServer::AsyncOutcome ShardServer::serve_async(std::chrono::microseconds poll_interval) {
  const int self = layout_.world_rank;
  const auto trainers = static_cast<std::size_t>(layout_.trainers);
  // Outside the loop: an idle server polls as fast as it is scheduled (core/poll_pause.h), so nothing there
  // allocates.
  std::vector<std::int64_t> control(control_size(layout_.trainers));
  std::vector<int> arrived;
  arrived.reserve(trainers);
  applied_.resize(trainers, 0);
  std::optional<comm::Watchdog::Wait> idle;  // armed while no trainer pushes anything
  for (;;) {
    windows_.control.read(self, 0, control);
    arrived.clear();
    for (int trainer = 0; trainer < layout_.trainers; ++trainer) {
      if (control[control_index(trainer, kPushedSeq)] > applied_[trainer]) arrived.push_back(trainer);
    }
    if (!arrived.empty()) {
      idle.reset();
      for (const int trainer : arrived) {
        const std::int64_t staleness = apply_push(trainer);
        applied_[trainer] = control[control_index(trainer, kPushedSeq)];
        windows_.control.write(self, control_index(trainer, kStaleness), staleness);
        windows_.control.write(self, control_index(trainer, kAppliedSeq), applied_[trainer]);
      }
      continue;  // more may have arrived while we applied
    }
    if (control[kDoneIndex] == layout_.trainers) return AsyncOutcome::kDone;  // announced after the last push
    // A checkpoint request lives on shard 0; the others look there (only when idle: trainers that quiesce stop
    // pushing, so every server comes here).
    std::int64_t words[2] = {control[kCheckpointRequestIndex], control[kQuiescedIndex]};
    if (self != 0) windows_.control.read(0, kCheckpointRequestIndex, words);
    if (words[0] != 0 && words[1] == layout_.trainers) {
      checkpoint_request_ = words[0];
      return AsyncOutcome::kCheckpoint;
    }
    if (!idle) idle.emplace("the server loop, no trainer pushing anything");
    pause_between_polls(poll_interval);
  }
}

// One trainer's push as its own update: its dense slot, then its rows (async steps). Returns its staleness: the
// updates applied since the version its gradient came from.
std::int64_t ShardServer::apply_push(int trainer) {
  const auto start = Clock::now();
  const std::size_t stride = slot_stride(slice_size_);
  WindowLock lock(windows_.grads.handle(), layout_.world_rank, WindowLock::Mode::kShared);
  const float* slot = windows_.grads.local().data() + trainer * stride;
  const std::int64_t staleness = version_ - read_version(slot + slice_size_ + 1);
  if (slot[slice_size_] > 0) {
    apply({slot, slice_size_});
    weights_.assign(static_cast<std::size_t>(layout_.trainers), 0.0f);  // this trainer's push alone
    weights_[static_cast<std::size_t>(trainer)] = 1.0f;
    for (const auto& table : tables_) {
      table->update(weights_);
      table->meet_one(version_, trainer);  // keyed tables: this push's sightings, at the server's update count
    }
  }
  stats_.busy_seconds += seconds_since(start);
  return staleness;
}

}  // namespace pstrain::ps
