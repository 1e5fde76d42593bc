#include "train/modes.h"

#include <array>

#include "allreduce/allreduce_exchange.h"
#include "core/error.h"
#include "ps/exchange_modes.h"
#include "train/exchange_factory.h"

namespace pstrain::train {

namespace {

std::chrono::microseconds poll_interval(const JobContext& job) {
  return std::chrono::microseconds(job.config.poll_interval_us);
}

std::unique_ptr<exchange::GradientExchange> make_sync(const JobContext&, const ExchangeParts& parts) {
  if (parts.overlap.sync == ps::SyncTransport::kOneSided) return ps::make_sync_exchange(*parts.client, parts.tables);
  return ps::make_streamed_sync_exchange(*parts.client, *parts.blocks, parts.channel, parts.tables);
}

std::unique_ptr<exchange::GradientExchange> make_async(const JobContext& job, const ExchangeParts& parts) {
  return ps::make_async_exchange(*parts.client, parts.trainers, poll_interval(job), parts.overlap.stream_pushes,
                                 parts.tables);
}

std::unique_ptr<exchange::GradientExchange> make_ssp(const JobContext& job, const ExchangeParts& parts) {
  return ps::make_ssp_exchange(*parts.client, parts.trainers, poll_interval(job), job.config.staleness,
                               parts.overlap.stream_pushes, parts.tables);
}

// The registry: one row per mode.
// clang-format off
constexpr std::array<ModeTraits, 4> kModes = {{
    //  mode              name         summary
    //  servers common  stale  push-upd dynamic  server loop               overlap                        exchange
    {Mode::kSync, "sync", "sync",
        true,   true,   false, false,   false,   ServerLoop::kCommonSteps, OverlapKind::kSyncBlocks,       make_sync},
    {Mode::kAsync, "async", "async",
        true,   false,  false, true,    true,    ServerLoop::kUntilDone,   OverlapKind::kPushes,           make_async},
    {Mode::kSsp, "ssp", "ssp (async with bounded staleness)",
        true,   false,  true,  true,    true,    ServerLoop::kUntilDone,   OverlapKind::kPushes,           make_ssp},
    {Mode::kAllreduce, "allreduce",
        "allreduce (no servers: trainers average gradients with NCCL on GPUs, MPI_Allreduce on CPUs)",
        false,  true,   false, false,   false,   ServerLoop::kNone,        OverlapKind::kAllreduceBuckets, make_allreduce_replicas},
}};
// clang-format on

}  // namespace

const ModeTraits& mode_traits(Mode mode) {
  for (const ModeTraits& traits : kModes) {
    if (traits.mode == mode) return traits;
  }
  PSTRAIN_ASSERT(false, "mode ", static_cast<int>(mode), " is not registered in train/modes.cc");
  return kModes.front();
}

Mode mode_named(std::string_view name) {
  std::string names;
  for (const ModeTraits& traits : kModes) {
    if (traits.name == name) return traits.mode;
    names += cat(names.empty() ? "" : ", ", traits.name);
  }
  throw Error(ExitCode::kUsage, cat("--mode '", name, "' is not one of ", names));
}

std::string mode_help() {
  std::string help;
  for (const ModeTraits& traits : kModes) help += cat(help.empty() ? "" : " | ", traits.summary);
  return help;
}

}  // namespace pstrain::train
