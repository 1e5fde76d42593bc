#pragma once
// What each training mode (--mode) is, declared once (traits.cc): the traits the rest of pstrain asks instead of
// testing `mode == ...`, and where the mode's ranks meet (its cadence). This part of the modes' registry depends on
// nothing but lib/core, so that programs that only parse flags (pstrain-sweep, the launcher, the fuzz targets) need
// none of the exchanges; each mode's exchange is built beside it, in this folder (builders.h). Adding a mode is its
// exchange (a file here), one row in traits.cc and one in builders.cc; the protocol each mode follows is stated in
// exchange/step_protocol.h.
#include <cstdint>
#include <string>
#include <string_view>

#include "exchange/meeting_cadence.h"

namespace pstrain::modes {

enum class Mode { kSync, kAsync, kSsp, kAllreduce, kGeo };

// The loop a parameter-server shard runs for the mode (server/server_role.cc).
enum class ServerLoop {
  kNone,         // no servers: the trainers hold replicas
  kCommonSteps,  // one update per meeting, checkpoints at meetings (the run's schedule and the mode's cadence)
  kUntilDone,    // every push applied as it comes until every trainer is done; checkpoints by request
};

// What travels behind the computation with --overlap (job/overlap_plan.h).
enum class OverlapKind {
  kSyncBlocks,        // each gradient block streamed to its shard during the backward pass (geo: the sync
                      // round's transport, blocks sent at the meeting)
  kPushes,            // async pushes put block by block during the backward pass
  kAllreduceBuckets,  // buckets summed during the backward pass
};

struct ModeTraits {
  Mode mode;
  std::string_view name;     // as --mode spells it
  std::string_view summary;  // its part of --mode's help line
  bool has_servers;          // parameter-server shards on the low ranks hold the model (false: replicas)
  bool common_steps;         // every trainer takes the same steps together: one update per meeting, the same bits
                             // every run, checkpoints at meetings
  bool bounded_staleness;    // --staleness bounds how far a trainer runs ahead of the slowest
  bool each_push_updates;    // every trainer's push is an update of its own (--lr is divided by the trainers)
  bool dynamic_dispatch;     // --dispatch dynamic is possible (trainers need not take equal steps)
  bool trainers_step_alone;  // each trainer updates its own copy with its own optimizer and meets the servers every
                             // --geo-steps steps (meeting_cadence), where they add the trainers' sample-weighted
                             // mean change; the model stays whole on every trainer
  ServerLoop server_loop;
  OverlapKind overlap;
};

const ModeTraits& mode_traits(Mode mode);
// As --mode spells it.
std::string to_string(Mode mode);
// The mode --mode names; throws Error(kUsage) listing the modes when there is none.
Mode mode_named(std::string_view name);
// "sync | async | ssp (...) | ...": --mode's help line, from every mode's summary.
std::string mode_help();
// Where the mode's ranks meet within a pass: after every step, or (trainers that step alone) every `steps_alone`.
exchange::MeetingCadence meeting_cadence(Mode mode, std::int64_t steps_alone);
// Every trainer takes the same steps together: the mode's common steps, or a run without servers (local or
// all-reduce), whose trainers update their own copies once a step.
bool trainers_step_together(Mode mode, int pservers);

}  // namespace pstrain::modes
