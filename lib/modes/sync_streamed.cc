// --mode sync over SyncTransport::kStreamed, the trainer's side: the gradient out block by block, the updated
// blocks back, the flags agreed (exchange/step_protocol.h).
#include <chrono>

#include "comm/watchdog.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "modes/exchanges.h"
#include "modes/table_rows_exchange.h"
#include "ps/block_stream.h"

namespace pstrain::modes {

namespace {

class StreamedSyncExchange final : public TableRowsExchange, public exchange::ComputationOverlap {
 public:
  StreamedSyncExchange(ps::DataClient& client, const ps::ShardPlan& blocks, MPI_Comm channel, ps::TableClient* tables)
      : TableRowsExchange(tables), client_(client), channel_(channel), blocks_(blocks, channel, timers_) {}
  void start(std::span<float> parameters) override { client_.pull(parameters); }
  exchange::ComputationOverlap* overlap() override { return this; }
  nn::ParameterStream* stream_in_place(std::span<const float> gradient, std::span<float> parameters) override {
    blocks_.stream_in_place(gradient, parameters);
    return &blocks_;
  }
  void begin_step(std::size_t count) override { blocks_.begin(static_cast<float>(count)); }
  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace&, std::span<float> parameters,
            int& flags) override {
    static_cast<void>(count);  // the shards have it from begin_step
    const comm::Watchdog::Wait wait("a sync step (gradient out, updated parameters in)");
    exchange::StepFlagAgreement agreement;
    if (tables_ == nullptr) agreement.begin(channel_, flags);
    blocks_.end(gradient, parameters);
    const auto start = Clock::now();
    if (tables_ == nullptr) {
      flags = agreement.finish();
    } else {
      tables_->push(gradient);                               // an empty slot when this trainer had no batch
      flags = exchange::wait_for_the_servers_update(flags);  // the servers update the rows meanwhile
    }
    timers_.sync_seconds += seconds_since(start);
    // The blocks still on their way land while the next forward pass runs (BlockStream::before_forward), unless
    // nobody streams or the step ends in a checkpoint or a stop, which must see the step's parameters.
    if (!blocks_.streaming() || flags != 0) blocks_.settle();
    staleness_.record(0);
  }
  void settle_parameters() override { blocks_.settle(); }
  // Every trainer already holds the same dense parameters; evaluation fetches the rows it looks up, batch by batch.
  void finish_pass(std::span<float>) override { blocks_.settle(); }
  void finish() override { blocks_.settle(); }

 private:
  ps::DataClient& client_;
  MPI_Comm channel_;
  ps::BlockStream blocks_;
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_streamed_sync_exchange(ps::DataClient& client,
                                                                        const ps::ShardPlan& blocks, MPI_Comm channel,
                                                                        ps::TableClient* tables) {
  return std::make_unique<StreamedSyncExchange>(client, blocks, channel, tables);
}

}  // namespace pstrain::modes
