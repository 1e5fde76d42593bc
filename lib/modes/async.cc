#include "modes/async.h"

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/poll_pause.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "modes/exchanges.h"

namespace pstrain::modes {

AsyncExchange::AsyncExchange(ps::DataClient& client, ps::ControlClient& control, MPI_Comm trainers,
                             std::chrono::microseconds poll_interval, ps::TableClient* tables, bool stream_pushes)
    : TableRowsExchange(tables),
      client_(client),
      control_(control),
      trainers_(trainers),
      poll_interval_(poll_interval),
      stream_pushes_(stream_pushes),
      pushes_(client),
      pushed_(client.shards(), 0),
      observed_(client.shards(), 0) {}

void AsyncExchange::start(std::span<float> parameters) {
  client_.pull(parameters);
}

nn::ParameterStream* AsyncExchange::stream_in_place(std::span<const float> gradient, std::span<float>) {
  if (!stream_pushes_) return nullptr;
  pushes_.stream_in_place(gradient);
  return &pushes_;
}

void AsyncExchange::begin_step(std::size_t) {
  if (pushes_.streaming()) pushes_.begin();
}

void AsyncExchange::step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace&,
                         std::span<float> parameters, int&) {
  // Like PaddlePaddle's async trainer: send the gradient, wait for the shards to apply it (never for the other
  // trainers), then fetch whatever the parameters are now. Waiting for our own update keeps the staleness to
  // the other trainers' pushes and frees the slot for the next step.
  const comm::Watchdog::Wait wait("an async step (push, wait for the shards to apply it, pull)");
  auto start = Clock::now();
  if (pushes_.streaming()) {
    pushes_.end(static_cast<float>(count));  // the blocks the backward pass finished are there or on their way
  } else {
    client_.push(gradient, static_cast<float>(count));
  }
  if (tables_ != nullptr) tables_->push(gradient);  // complete before the push is announced
  for (int shard = 0; shard < client_.shards(); ++shard) {
    control_.announce_push(shard, ++pushed_[shard]);  // the slot carries the base version
  }
  wait_until_applied();
  timers_.push_seconds += seconds_since(start);
  start = Clock::now();
  client_.pull(parameters);
  timers_.pull_seconds += seconds_since(start);
}

void AsyncExchange::finish_pass(std::span<float> parameters) {
  const comm::Watchdog::Wait wait("the end-of-pass meeting of the async trainers");
  const auto start = Clock::now();
  wait_until_applied();
  // Every trainer's last push of the pass is applied once all arrived.
  exchange::PassEndMeeting meeting(trainers_);
  while (!meeting.arrived()) {
    if (on_checkpoint_request_ && control_.checkpoint_request() != 0) {
      if (on_checkpoint_request_()) {  // stopping: the job ends after this checkpoint
        stopped_in_meeting_ = true;
        return;
      }
    } else {
      pause_between_polls(poll_interval_);
    }
  }
  client_.pull(parameters);
  exchange::every_trainer_pulled(trainers_);
  timers_.sync_seconds += seconds_since(start);
}

int AsyncExchange::checkpoint_request(int wish) {
  if (wish != 0) control_.request_checkpoint(wish);
  return static_cast<int>(control_.checkpoint_request());
}

void AsyncExchange::set_checkpoint_handler(std::function<bool()> handler) {
  on_checkpoint_request_ = std::move(handler);
}

void AsyncExchange::quiesce() {
  const comm::Watchdog::Wait wait("quiescing for a checkpoint (our pushes being applied)");
  wait_until_applied();
  control_.announce_quiesced();
}

void AsyncExchange::finish() {
  const comm::Watchdog::Wait wait("the last async push");
  wait_until_applied();
  control_.announce_done();
}

void AsyncExchange::wait_until_applied() {
  for (int shard = 0; shard < client_.shards(); ++shard) {
    while (observed_[shard] < pushed_[shard]) {
      const std::int64_t applied = control_.applied_seq(shard);
      if (applied > observed_[shard]) {
        observed_[shard] = applied;
        staleness_.record(control_.staleness(shard));
      } else {
        // Back off: a tight loop of shared locks would keep the server from taking its exclusive one.
        pause_between_polls(poll_interval_);
      }
    }
  }
}

std::unique_ptr<exchange::GradientExchange> make_async_exchange(ps::DataClient& client, ps::ControlClient& control,
                                                                MPI_Comm trainers,
                                                                std::chrono::microseconds poll_interval,
                                                                bool stream_pushes, ps::TableClient* tables) {
  return std::make_unique<AsyncExchange>(client, control, trainers, poll_interval, tables, stream_pushes);
}

}  // namespace pstrain::modes
