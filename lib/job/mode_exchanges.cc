#include "job/mode_exchanges.h"

#include <array>
#include <utility>

#include "comm/communicator.h"
#include "config/modes.h"
#include "core/error.h"
#include "job/exchange_factory.h"
#include "ps/exchange_modes.h"

namespace pstrain::train {

namespace {

std::chrono::microseconds poll_interval(const JobContext& job) {
  return std::chrono::microseconds(job.config.poll_interval_us);
}

// The sync round over the transport --overlap chose (job/overlap_plan.h); with push groups (--node-aggregation,
// job/node_aggregation.h) the one-sided round where each group's leader pushes and pulls for the group.
// Collective over the trainers.
std::unique_ptr<exchange::GradientExchange> sync_round(const JobContext& job, const ExchangeParts& parts,
                                                       ps::TableClient* tables) {
  if (job.layout.aggregates_pushes()) {
    PSTRAIN_ASSERT(parts.overlap.sync == ps::SyncTransport::kOneSided, "node aggregation with streamed blocks");
    return ps::make_node_sync_exchange(*parts.client, *parts.control,
                                       comm::Communicator::split(parts.trainers, job.layout.push_slot(),
                                                                 job.layout.trainer_index),
                                       tables);
  }
  if (parts.overlap.sync == ps::SyncTransport::kOneSided) return ps::make_sync_exchange(*parts.client, tables);
  return ps::make_streamed_sync_exchange(*parts.client, *parts.blocks, parts.channel, tables);
}

std::unique_ptr<exchange::GradientExchange> make_sync(const JobContext& job, const ExchangeParts& parts) {
  return sync_round(job, parts, parts.tables);
}

std::unique_ptr<exchange::GradientExchange> make_async(const JobContext& job, const ExchangeParts& parts) {
  return ps::make_async_exchange(*parts.client, *parts.control, parts.trainers, poll_interval(job), parts.overlap.stream_pushes,
                                 parts.tables);
}

std::unique_ptr<exchange::GradientExchange> make_ssp(const JobContext& job, const ExchangeParts& parts) {
  return ps::make_ssp_exchange(*parts.client, *parts.control, parts.trainers, poll_interval(job), job.config.staleness,
                               parts.overlap.stream_pushes, parts.tables);
}

// GEO-SGD: plain SGD over the trainer's own copy, its step count at the run's global step (a checkpoint holds the
// servers' state only: every trainer equals the servers at a meeting, where checkpoints are written).
std::unique_ptr<exchange::GradientExchange> make_geo(const JobContext& job, const ExchangeParts& parts) {
  auto optimizer = whole_model_optimizer(job);  // stateless: its start comes from the servers
  optimizer->set_steps_taken(parts.run.resumed ? static_cast<std::uint64_t>(parts.run.resumed->training.global_step)
                                               : 0);
  return ps::make_geo_exchange(sync_round(job, parts, nullptr), std::move(optimizer), meeting_cadence(job.config));
}

// One row per mode of config/modes.cc: the exchange its trainers step with.
constexpr std::array<std::pair<Mode, ExchangeMaker>, 5> kExchanges = {{
    {Mode::kSync, make_sync},
    {Mode::kAsync, make_async},
    {Mode::kSsp, make_ssp},
    {Mode::kAllreduce, make_allreduce_replicas},
    {Mode::kGeo, make_geo},
}};

}  // namespace

ExchangeMaker exchange_maker(Mode mode) {
  for (const auto& [registered, maker] : kExchanges) {
    if (registered == mode) return maker;
  }
  PSTRAIN_ASSERT(false, "mode ", to_string(mode), " has no exchange in job/mode_exchanges.cc");
  return nullptr;
}

}  // namespace pstrain::train
