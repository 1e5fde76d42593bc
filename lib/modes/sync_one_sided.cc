// --mode sync over SyncTransport::kOneSided, the trainer's side: push, meet, pull (exchange/step_protocol.h).
#include <chrono>

#include "comm/watchdog.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "modes/exchanges.h"
#include "modes/table_rows_exchange.h"

namespace pstrain::modes {

namespace {

class SyncExchange final : public TableRowsExchange {
 public:
  SyncExchange(ps::DataClient& client, ps::TableClient* tables) : TableRowsExchange(tables), client_(client) {}
  void start(std::span<float> parameters) override { client_.pull(parameters); }
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace&, std::span<float> parameters,
            int& flags) override {
    const comm::Watchdog::Wait wait("a sync step (push, barrier, update, pull)");
    auto start = Clock::now();
    client_.push(gradient, static_cast<float>(count));
    if (tables_ != nullptr) tables_->push(gradient);  // an empty slot when this trainer had no batch
    timers_.push_seconds += seconds_since(start);
    start = Clock::now();
    flags = exchange::wait_for_the_servers_update(flags);
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
  ps::DataClient& client_;
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_sync_exchange(ps::DataClient& client, ps::TableClient* tables) {
  return std::make_unique<SyncExchange>(client, tables);
}

}  // namespace pstrain::modes
