// --mode geo (GEO-SGD, PaddlePaddle Fleet's geo mode), the trainer's side: between meetings the trainer runs the
// run's optimizer (--optimizer: plain SGD by default, or the recipe's momentum or Adam, whose state stays the
// trainer's own across meetings, as in local SGD) on its own copy of the model and talks to nobody; at a meeting (its
// cadence, exchange/meeting_cadence.h: every --geo-steps steps and after a pass's last) it pushes its change since it
// last pulled, weighted by the samples it trained meanwhile, the servers add the sample-weighted mean change
// (optim::make_change_adder) in the one-sided sync round of exchange/step_protocol.h, and it pulls the result.
// Communication falls by --geo-steps; with one trainer the run is local training, with --geo-steps 1 it is sync SGD (up
// to rounding in both).
//
// Row tables the servers hold by rows (ps/table_client.h) are never whole on a trainer: it fetches a row at its first
// lookup after a meeting and holds it until the next, moving it by SGD at the run's learning rate (a row's optimizer
// state would have to travel with the row, which a trainer holds only between two meetings: PaddlePaddle's
// distributed lookup tables also take SGD only); at the meeting it pushes the change of every row it held, and the
// servers add the rows' sample-weighted mean change (optim::make_row_change_adder). With --optimizer sgd a run so gets
// the bits of one that holds its tables whole (--table-exchange dense).
#include <algorithm>
#include <vector>

#include "modes/exchanges.h"
#include "modes/table_rows_exchange.h"

namespace pstrain::modes {

namespace {

// The rows a batch looks up come from the servers at their first lookup after a meeting (TableRowsExchange: the
// time counted as this exchange's pulling), then from this trainer.
class GeoExchange final : public TableRowsExchange {
 public:
  explicit GeoExchange(StepsAloneParts parts) : TableRowsExchange(parts.tables), parts_(std::move(parts)) {}

  void start(std::span<float> parameters) override {
    parts_.meetings->start(parameters);
    pulled_.assign(parameters.begin(), parameters.end());
    if (parts_.tables != nullptr) parts_.tables->hold_rows_until_push(pulled_);
  }

  // The loop announces every step's samples; the servers hear of them only at a meeting (in step()).
  void begin_step(std::size_t) override {}

  // Every step updates the trainer's own copy; the steps where the cadence says so then meet the servers.
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace& place,
            std::span<float> parameters, int& flags) override {
    step_alone(gradient, count, parameters);
    if (parts_.cadence.meets_after(place.step, place.steps)) meet(parameters, flags);
  }

  void finish_pass(std::span<float> parameters) override { parts_.meetings->finish_pass(parameters); }
  void finish() override { parts_.meetings->finish(); }
  // Its state (momentum, Adam's moments) is this trainer's own, carried across meetings: a checkpoint holds it.
  optim::Optimizer* own_optimizer() override { return parts_.optimizer.get(); }

 private:
  // The dense parameters lead the flat vector, the caches of the held rows follow (run_common/table_layout.h).
  void step_alone(std::span<const float> gradient, std::size_t count, std::span<float> parameters) {
    const std::size_t dense = parts_.optimizer->size();
    if (count > 0) {
      parts_.optimizer->step(parameters.first(dense), gradient.first(dense));
      if (parts_.held_rows) parts_.held_rows->step(parameters.subspan(dense), gradient.subspan(dense));
    } else {
      parts_.optimizer->begin_update();  // counted all the same: every trainer's schedule stays at the global step
      if (parts_.held_rows) parts_.held_rows->begin_update();
    }
    samples_ += count;
  }

  // The change since the last pull out (the held rows' since their fetch), weighted by the samples trained
  // meanwhile; the servers' sum in.
  void meet(std::span<float> parameters, int& flags) {
    change_.resize(parameters.size());
    std::transform(parameters.begin(), parameters.end(), pulled_.begin(), change_.begin(),
                   [](float now, float then) { return now - then; });
    exchange::GradientExchange& meetings = *parts_.meetings;
    meetings.begin_step(samples_);  // the streamed transport sends the count ahead of the blocks
    meetings.step(change_, samples_, {}, parameters, flags);  // the servers weight each change by its samples
    add_timers(meetings.timers());                            // the rows fetched since the last meeting included
    meetings.timers() = {};
    std::ranges::copy(parameters, pulled_.begin());
    samples_ = 0;
  }

  void add_timers(const exchange::ExchangeTimers& round) {
    timers_.push_seconds += round.push_seconds;
    timers_.sync_seconds += round.sync_seconds;
    timers_.pull_seconds += round.pull_seconds;
  }

  StepsAloneParts parts_;
  std::vector<float> pulled_;  // the parameters as the trainer last pulled them (held rows: as fetched)
  std::vector<float> change_;
  std::size_t samples_ = 0;  // trained since the last meeting
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_geo_exchange(StepsAloneParts parts) {
  return std::make_unique<GeoExchange>(std::move(parts));
}

}  // namespace pstrain::modes
