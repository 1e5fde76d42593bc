// --mode geo (GEO-SGD, PaddlePaddle Fleet's geo mode), the trainer's side: between meetings the trainer runs the
// run's optimizer (--optimizer: plain SGD by default, or the recipe's momentum or Adam, whose state stays the
// trainer's own across meetings, as in local SGD) on its own copy of the model and talks to nobody; at a meeting (its
// cadence, exchange/meeting_cadence.h: every --geo-steps steps and after a pass's last) it pushes its change since it
// last pulled, weighted by the samples it trained meanwhile, the servers add the sample-weighted mean change
// (optim::make_change_adder) in the one-sided sync round of exchange/step_protocol.h, and it pulls the result.
// Communication falls by --geo-steps; with one trainer the run is local training, with --geo-steps 1 it is sync SGD (up
// to rounding in both).
#include <algorithm>
#include <vector>

#include "modes/exchanges.h"

namespace pstrain::modes {

namespace {

class GeoExchange final : public exchange::GradientExchange {
 public:
  GeoExchange(std::unique_ptr<exchange::GradientExchange> meetings, std::unique_ptr<optim::Optimizer> optimizer,
              exchange::MeetingCadence cadence)
      : meetings_(std::move(meetings)), optimizer_(std::move(optimizer)), cadence_(cadence) {}

  void start(std::span<float> parameters) override {
    meetings_->start(parameters);
    pulled_.assign(parameters.begin(), parameters.end());
  }

  // The loop announces every step's samples; the servers hear of them only at a meeting (in step()).
  void begin_step(std::size_t) override {}

  // Every step updates the trainer's own copy; the steps where the cadence says so then meet the servers.
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace& place,
            std::span<float> parameters, int& flags) override {
    step_alone(gradient, count, parameters);
    if (cadence_.meets_after(place.step, place.steps)) meet(parameters, flags);
  }

  void finish_pass(std::span<float> parameters) override { meetings_->finish_pass(parameters); }
  void finish() override { meetings_->finish(); }
  // Its state (momentum, Adam's moments) is this trainer's own, carried across meetings: a checkpoint holds it.
  optim::Optimizer* own_optimizer() override { return optimizer_.get(); }

 private:
  void step_alone(std::span<const float> gradient, std::size_t count, std::span<float> parameters) {
    if (count > 0) {
      optimizer_->step(parameters, gradient);
    } else {
      optimizer_->begin_update();  // counted all the same: every trainer's schedule stays at the global step
    }
    samples_ += count;
  }

  // The change since the last pull out, weighted by the samples trained meanwhile; the servers' sum in.
  void meet(std::span<float> parameters, int& flags) {
    change_.resize(parameters.size());
    std::transform(parameters.begin(), parameters.end(), pulled_.begin(), change_.begin(),
                   [](float now, float then) { return now - then; });
    meetings_->timers() = {};
    meetings_->begin_step(samples_);  // the streamed transport sends the count ahead of the blocks
    meetings_->step(change_, samples_, {}, parameters, flags);  // the servers weight each change by its samples
    add_timers(meetings_->timers());
    std::ranges::copy(parameters, pulled_.begin());
    samples_ = 0;
  }

  void add_timers(const exchange::ExchangeTimers& round) {
    timers_.push_seconds += round.push_seconds;
    timers_.sync_seconds += round.sync_seconds;
    timers_.pull_seconds += round.pull_seconds;
  }

  std::unique_ptr<exchange::GradientExchange> meetings_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  exchange::MeetingCadence cadence_;
  std::vector<float> pulled_;  // the parameters as the trainer last pulled them
  std::vector<float> change_;
  std::size_t samples_ = 0;  // trained since the last meeting
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_geo_exchange(std::unique_ptr<exchange::GradientExchange> meetings,
                                                              std::unique_ptr<optim::Optimizer> optimizer,
                                                              exchange::MeetingCadence cadence) {
  return std::make_unique<GeoExchange>(std::move(meetings), std::move(optimizer), cadence);
}

}  // namespace pstrain::modes
