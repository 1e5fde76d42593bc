// --mode ssp: async steps plus the staleness gate (exchange/step_protocol.h).
#include <algorithm>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/poll_pause.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "modes/async.h"
#include "modes/exchanges.h"

namespace pstrain::modes {

namespace {

// Stale synchronous parallel: async steps, plus a gate after each one. Clocks count the steps finished in the
// pass; a trainer that finished its pass publishes kClockPassDone so that nobody waits for it at the pass end.
class SspExchange final : public AsyncExchange {
 public:
  SspExchange(ps::DataClient& client, ps::ControlClient& control, MPI_Comm trainers,
              std::chrono::microseconds poll_interval, int staleness, bool stream_pushes, ps::TableClient* tables)
      : AsyncExchange(client, control, trainers, poll_interval, tables, stream_pushes), staleness_bound_(staleness) {}

  void start(std::span<float> parameters) override {
    control_.publish_clock(0);
    exchange::clocks_published(trainers_);
    AsyncExchange::start(parameters);
  }

  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace& place,
            std::span<float> parameters, int& flags) override {
    AsyncExchange::step(gradient, count, place, parameters, flags);
    const comm::Watchdog::Wait wait("the staleness gate (waiting for the slowest trainer)");
    control_.publish_clock(++clock_);
    const auto start = Clock::now();
    for (;;) {
      const auto clocks = control_.read_clocks();
      const std::int64_t slowest = *std::min_element(clocks.begin(), clocks.end());
      if (clock_ - slowest <= staleness_bound_) {
        clock_lead_.record(clock_ - slowest);
        break;
      }
      // A slower trainer may be quiescing for a checkpoint: go to the step boundary and join it.
      if (control_.checkpoint_request() != 0) break;
      pause_between_polls(poll_interval_);
    }
    timers_.gate_seconds += seconds_since(start);
  }

  void finish_pass(std::span<float> parameters) override {
    control_.publish_clock(ps::kClockPassDone);
    AsyncExchange::finish_pass(parameters);  // ends with a barrier: every trainer is past its last gate
    // A stop joined in the meeting: the trainer that asked for it is gone, and the barrier below would wait for it
    // until the watchdog ended the job (exit 6; seen once in 150 trials of the soak, ssp over TCP).
    if (stopped_in_meeting_) return;
    clock_ = 0;
    control_.publish_clock(0);
    exchange::clocks_published(trainers_);  // no one gates on a clock still marked done from the last pass
  }

 private:
  int staleness_bound_;
  std::int64_t clock_ = 0;
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_ssp_exchange(ps::DataClient& client, ps::ControlClient& control,
                                                              MPI_Comm trainers,
                                                              std::chrono::microseconds poll_interval, int staleness,
                                                              bool stream_pushes, ps::TableClient* tables) {
  return std::make_unique<SspExchange>(client, control, trainers, poll_interval, staleness, stream_pushes, tables);
}

}  // namespace pstrain::modes
