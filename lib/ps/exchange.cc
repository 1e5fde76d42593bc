#include "ps/exchange.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"

namespace pstrain::ps {

using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class LocalExchange final : public ParameterExchange {
 public:
  LocalExchange(std::unique_ptr<optim::Optimizer> optimizer, std::span<const float> initial)
      : optimizer_(std::move(optimizer)), initial_(initial.begin(), initial.end()) {}
  void start(std::span<float> parameters) override { std::ranges::copy(initial_, parameters.begin()); }
  void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters, int&) override {
    if (count > 0) optimizer_->step(parameters, gradient);
  }
  optim::Optimizer* own_optimizer() override { return optimizer_.get(); }
  void finish_pass(std::span<float>) override {}
  void finish() override {}

 private:
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::vector<float> initial_;
};

class SyncExchange final : public ParameterExchange {
 public:
  explicit SyncExchange(PsClient& client) : client_(client) {}
  void start(std::span<float> parameters) override { client_.pull(parameters); }
  void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters, int& flags) override {
    const comm::Watchdog::Wait wait("a sync step (push, barrier, update, pull)");
    auto start = Clock::now();
    client_.push(gradient, static_cast<float>(count));
    timers_.push_seconds += seconds_since(start);
    start = Clock::now();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));  // all slots written
    int agreed = 0;                          // servers updated; control flags agreed (ShardServer::sync_step)
    MPI_CHECK(MPI_Allreduce(&flags, &agreed, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD));
    flags = agreed;
    timers_.sync_seconds += seconds_since(start);
    start = Clock::now();
    client_.pull(parameters);
    timers_.pull_seconds += seconds_since(start);
    staleness_.record(0);
  }
  void finish_pass(std::span<float>) override {}  // every trainer already holds the same parameters
  void finish() override {}

 private:
  PsClient& client_;
};

class AsyncExchange : public ParameterExchange {
 public:
  AsyncExchange(PsClient& client, MPI_Comm trainers, std::chrono::microseconds poll_interval)
      : client_(client),
        trainers_(trainers),
        poll_interval_(poll_interval),
        pushed_(client.shards(), 0),
        observed_(client.shards(), 0) {}

  void start(std::span<float> parameters) override { client_.pull(parameters); }

  void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters, int&) override {
    // Like PaddlePaddle's async trainer: send the gradient, wait for the shards to apply it (never for the other
    // trainers), then fetch whatever the parameters are now. Waiting for our own update keeps the staleness to
    // the other trainers' pushes and frees the slot for the next step.
    const comm::Watchdog::Wait wait("an async step (push, wait for the shards to apply it, pull)");
    auto start = Clock::now();
    client_.push(gradient, static_cast<float>(count));
    for (int shard = 0; shard < client_.shards(); ++shard) {
      client_.announce_push(shard, ++pushed_[shard], client_.version(shard));
    }
    wait_until_applied();
    timers_.push_seconds += seconds_since(start);
    start = Clock::now();
    client_.pull(parameters);
    timers_.pull_seconds += seconds_since(start);
  }

  void finish_pass(std::span<float> parameters) override {
    const comm::Watchdog::Wait wait("the end-of-pass meeting of the async trainers");
    const auto start = Clock::now();
    wait_until_applied();
    // Every trainer's last push of the pass is applied after this barrier. It is nonblocking so that a checkpoint
    // requested by a trainer still stepping can be joined while we wait for it.
    MPI_Request meeting = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Ibarrier(trainers_, &meeting));
    for (int arrived = 0;;) {
      MPI_CHECK(MPI_Test(&meeting, &arrived, MPI_STATUS_IGNORE));
      if (arrived) break;
      if (on_checkpoint_request_ && client_.checkpoint_request() != 0) {
        if (on_checkpoint_request_()) return;  // stopping: the job ends after this checkpoint
      } else {
        std::this_thread::sleep_for(poll_interval_);
      }
    }
    client_.pull(parameters);
    MPI_CHECK(MPI_Barrier(trainers_));  // nobody pushes again before everyone pulled the same state
    timers_.sync_seconds += seconds_since(start);
  }

  int checkpoint_request(int wish) override {
    if (wish != 0) client_.request_checkpoint(wish);
    return static_cast<int>(client_.checkpoint_request());
  }

  void set_checkpoint_handler(std::function<bool()> handler) override {
    on_checkpoint_request_ = std::move(handler);
  }

  void quiesce() override {
    const comm::Watchdog::Wait wait("quiescing for a checkpoint (our pushes being applied)");
    wait_until_applied();
    client_.announce_quiesced();
  }

  void finish() override {
    const comm::Watchdog::Wait wait("the last async push");
    wait_until_applied();
    client_.announce_done();
  }

 protected:
  void wait_until_applied() {
    for (int shard = 0; shard < client_.shards(); ++shard) {
      while (observed_[shard] < pushed_[shard]) {
        const ShardControl control = client_.read_control(shard);
        if (control.applied_seq > observed_[shard]) {
          observed_[shard] = control.applied_seq;
          staleness_.record(control.staleness);
        } else {
          // Back off: a tight loop of shared locks would keep the server from taking its exclusive one.
          std::this_thread::sleep_for(poll_interval_);
        }
      }
    }
  }

  PsClient& client_;
  MPI_Comm trainers_;
  std::chrono::microseconds poll_interval_;
  std::function<bool()> on_checkpoint_request_;

 private:
  std::vector<std::int64_t> pushed_;
  std::vector<std::int64_t> observed_;
};

// Stale synchronous parallel: async steps, plus a gate after each one. Clocks count the steps finished in the
// pass; a trainer that finished its pass publishes kClockPassDone so that nobody waits for it at the pass end.
class SspExchange final : public AsyncExchange {
 public:
  SspExchange(PsClient& client, MPI_Comm trainers, std::chrono::microseconds poll_interval, int staleness)
      : AsyncExchange(client, trainers, poll_interval), staleness_bound_(staleness) {}

  void start(std::span<float> parameters) override {
    client_.publish_clock(0);
    MPI_CHECK(MPI_Barrier(trainers_));  // every clock is initialised before anyone reads them
    AsyncExchange::start(parameters);
  }

  void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters, int& flags) override {
    AsyncExchange::step(gradient, count, parameters, flags);
    client_.publish_clock(++clock_);
    const comm::Watchdog::Wait wait("the staleness gate (waiting for the slowest trainer)");
    const auto start = Clock::now();
    for (;;) {
      const auto clocks = client_.read_clocks();
      const std::int64_t slowest = *std::min_element(clocks.begin(), clocks.end());
      if (clock_ - slowest <= staleness_bound_) {
        clock_lead_.record(clock_ - slowest);
        break;
      }
      // A slower trainer may be quiescing for a checkpoint: go to the step boundary and join it.
      if (client_.checkpoint_request() != 0) break;
      std::this_thread::sleep_for(poll_interval_);
    }
    timers_.gate_seconds += seconds_since(start);
  }

  void finish_pass(std::span<float> parameters) override {
    client_.publish_clock(kClockPassDone);
    AsyncExchange::finish_pass(parameters);  // ends with a barrier: every trainer is past its last gate
    clock_ = 0;
    client_.publish_clock(0);
    MPI_CHECK(MPI_Barrier(trainers_));  // no one gates on a clock still marked done from the last pass
  }

 private:
  int staleness_bound_;
  std::int64_t clock_ = 0;
};

}  // namespace

void StalenessStats::record(std::int64_t staleness) {
  ++histogram[static_cast<std::size_t>(std::clamp<std::int64_t>(staleness, 0, kBuckets - 1))];
  ++count;
  sum += staleness;
  max = std::max(max, staleness);
}

std::int64_t StalenessStats::percentile(double fraction) const {
  if (count == 0) return 0;
  const auto rank = static_cast<std::int64_t>(fraction * static_cast<double>(count - 1));
  std::int64_t seen = 0;
  for (std::size_t bucket = 0; bucket < kBuckets; ++bucket) {
    seen += histogram[bucket];
    if (seen > rank) return static_cast<std::int64_t>(bucket);
  }
  return kBuckets - 1;
}

std::unique_ptr<ParameterExchange> make_local_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                       std::span<const float> initial) {
  return std::make_unique<LocalExchange>(std::move(optimizer), initial);
}
std::unique_ptr<ParameterExchange> make_sync_exchange(PsClient& client) {
  return std::make_unique<SyncExchange>(client);
}
std::unique_ptr<ParameterExchange> make_async_exchange(PsClient& client, MPI_Comm trainers,
                                                       std::chrono::microseconds poll_interval) {
  return std::make_unique<AsyncExchange>(client, trainers, poll_interval);
}
std::unique_ptr<ParameterExchange> make_ssp_exchange(PsClient& client, MPI_Comm trainers,
                                                     std::chrono::microseconds poll_interval, int staleness) {
  return std::make_unique<SspExchange>(client, trainers, poll_interval, staleness);
}

}  // namespace pstrain::ps
