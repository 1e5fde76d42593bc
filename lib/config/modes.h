#pragma once
// What each training mode (--mode) is, declared once, in modes.cc: the traits the rest of the trainer asks instead
// of testing `mode == ...`. This file depends on nothing but the configuration, so that tools that only parse
// pstrain's flags (pstrain-sweep, the fuzz targets) need none of the exchanges; the exchange each mode builds is
// registered beside the exchanges, in job/mode_exchanges.cc. Adding a mode is its exchange (a GradientExchange in
// lib/ps, lib/allreduce or lib/exchange), one row here and one row there; the protocol each mode follows is stated
// in exchange/step_protocol.h.
#include <string>
#include <string_view>

#include "config/train_config.h"
#include "exchange/meeting_cadence.h"

namespace pstrain::train {

// The loop a parameter-server shard runs for the mode (server/server_role.cc).
enum class ServerLoop {
  kNone,         // no servers: the trainers hold replicas
  kCommonSteps,  // one update per common step, checkpoints at common step boundaries (the run's schedule)
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
  bool common_steps;         // every trainer takes the same steps together: one update per step, the same bits
                             // every run, checkpoints at common step boundaries
  bool bounded_staleness;    // --staleness bounds how far a trainer runs ahead of the slowest
  bool each_push_updates;    // every trainer's push is an update of its own (--lr is divided by the trainers)
  bool dynamic_dispatch;     // --dispatch dynamic is possible (trainers need not take equal steps)
  bool trainers_step_alone;  // each trainer updates its own copy with its own optimizer (plain SGD) and meets the
                             // servers every --geo-steps steps, where they add the trainers' sample-weighted mean
                             // change (meeting_cadence); the model stays whole on every trainer
  ServerLoop server_loop;
  OverlapKind overlap;
};

const ModeTraits& mode_traits(Mode mode);
// Where the mode's ranks meet within a pass: after every step, or (trainers that step alone) every --geo-steps.
exchange::MeetingCadence meeting_cadence(const TrainConfig& config);
// Every trainer takes the same steps together: the mode's common steps, or a run without servers (local or
// all-reduce), whose trainers update their own copies once a step.
bool trainers_step_together(Mode mode, int pservers);
// The mode --mode names; throws Error(kUsage) listing the modes when there is none.
Mode mode_named(std::string_view name);
// "sync | async | ssp (...) | ...": --mode's help line, from every mode's summary.
std::string mode_help();

}  // namespace pstrain::train
