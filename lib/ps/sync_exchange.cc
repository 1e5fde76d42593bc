// --mode sync, the trainer's side: push, meet, pull (exchange/step_protocol.h).
#include <chrono>

#include "comm/watchdog.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "ps/exchange_modes.h"

namespace pstrain::ps {

namespace {

class SyncExchange final : public exchange::GradientExchange {
 public:
  SyncExchange(PsClient& client, TableClient* tables) : client_(client), tables_(tables) {}
  void start(std::span<float> parameters) override { client_.pull(parameters); }
  bool fetch_for_batch(std::span<float> features, std::size_t count, std::span<float> parameters) override {
    return fetch_rows_for_batch(tables_, features, count, parameters, timers_.pull_seconds);
  }
  bool fetch_for_evaluation(std::span<float> features, std::size_t count, std::span<float> parameters) override {
    return fetch_rows_for_evaluation(tables_, features, count, parameters);
  }
  bool read_table_rows(std::size_t table, std::uint64_t first, std::uint64_t count, std::span<float> out) override {
    return ps::read_table_rows(tables_, table, first, count, out);
  }
  void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters, int& flags) override {
    const comm::Watchdog::Wait wait("a sync step (push, barrier, update, pull)");
    auto start = Clock::now();
    client_.push(gradient, static_cast<float>(count));
    if (tables_ != nullptr) tables_->push(gradient);  // an empty slot when this trainer had no batch
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
  // Every trainer already holds the same dense parameters; evaluation fetches the rows it looks up, batch by batch.
  void finish_pass(std::span<float>) override {}
  void finish() override {}

 private:
  PsClient& client_;
  TableClient* tables_;
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_sync_exchange(PsClient& client, TableClient* tables) {
  return std::make_unique<SyncExchange>(client, tables);
}

}  // namespace pstrain::ps
