#include "modes/traits.h"

#include <array>

#include "core/error.h"

namespace pstrain::modes {

namespace {

// The registry of the modes' traits: one row per mode (their exchanges: builders.cc).
// clang-format off
constexpr std::array<ModeTraits, 5> kModes = {{
    //  mode              name         summary
    //  servers common  stale  push-upd dynamic  alone  server loop               overlap
    {Mode::kSync, "sync", "sync",
        true,   true,   false, false,   false,   false, ServerLoop::kCommonSteps, OverlapKind::kSyncBlocks},
    {Mode::kAsync, "async", "async",
        true,   false,  false, true,    true,    false, ServerLoop::kUntilDone,   OverlapKind::kPushes},
    {Mode::kSsp, "ssp", "ssp (async with bounded staleness)",
        true,   false,  true,  true,    true,    false, ServerLoop::kUntilDone,   OverlapKind::kPushes},
    {Mode::kAllreduce, "allreduce",
        "allreduce (no servers: trainers average gradients with NCCL on GPUs, MPI_Allreduce on CPUs)",
        false,  true,   false, false,   false,   false, ServerLoop::kNone,        OverlapKind::kAllreduceBuckets},
    {Mode::kGeo, "geo",
        "geo (GEO-SGD: each trainer takes --geo-steps SGD steps alone, then the servers add the trainers' mean change)",
        true,   true,   false, false,   false,   true,  ServerLoop::kCommonSteps, OverlapKind::kSyncBlocks},
}};
// clang-format on

}  // namespace

const ModeTraits& mode_traits(Mode mode) {
  for (const ModeTraits& traits : kModes) {
    if (traits.mode == mode) return traits;
  }
  PSTRAIN_ASSERT(false, "mode ", static_cast<int>(mode), " is not registered in modes/traits.cc");
  return kModes.front();
}

std::string to_string(Mode mode) {
  return std::string(mode_traits(mode).name);
}

exchange::MeetingCadence meeting_cadence(Mode mode, std::int64_t steps_alone) {
  return {mode_traits(mode).trainers_step_alone ? steps_alone : 1};
}

bool trainers_step_together(Mode mode, int pservers) {
  return mode_traits(mode).common_steps || pservers == 0;
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

}  // namespace pstrain::modes
