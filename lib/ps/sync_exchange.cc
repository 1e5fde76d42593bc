// --mode sync, the trainer's side: push, meet, pull (exchange/step_protocol.h).
#include <chrono>

#include "comm/watchdog.h"
#include "exchange/step_protocol.h"
#include "ps/exchange_modes.h"

namespace pstrain::ps {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class SyncExchange final : public exchange::GradientExchange {
 public:
  explicit SyncExchange(PsClient& client) : client_(client) {}
  void start(std::span<float> parameters) override { client_.pull(parameters); }
  void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters, int& flags) override {
    const comm::Watchdog::Wait wait("a sync step (push, barrier, update, pull)");
    auto start = Clock::now();
    client_.push(gradient, static_cast<float>(count));
    timers_.push_seconds += seconds_since(start);
    start = Clock::now();
    exchange::all_gradients_written();
    flags = exchange::agree_on_step_flags(flags);  // the servers updated meanwhile (ShardServer::sync_step)
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

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_sync_exchange(PsClient& client) {
  return std::make_unique<SyncExchange>(client);
}

}  // namespace pstrain::ps
