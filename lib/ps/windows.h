#pragma once
// The memory each server shard exposes, and the one-sided protocol over it.
//
// Server shard s (world rank s) exposes three windows; trainers expose nothing (zero-size windows):
//   params  float  [2 + L]        words 0-1 hold the int64 version (updates applied so far) so that a trainer
//                                 reads parameters and their version in one shared-lock epoch; then the slice.
//   grads   float  G x [L + 3]    one slot per push group (comm/push_groups.h; G = T, one per trainer, unless
//                                 --node-aggregation groups the trainers of a node, whose leader then puts the
//                                 node's sum into the group's slot): its gradient for the slice, its sample count,
//                                 then the int64 version of the parameters the gradient was computed from (the base
//                                 version: async staleness) in two floats (async: put one-sidedly, all of it
//                                 complete before the push is announced; sync: the blocks arrive as messages into
//                                 the slot, and the count comes in a message of its own; sync with node
//                                 aggregation: one-sided only).
//   control int64  [4 + 5T]       [0] next chunk of the pass (dynamic dispatch, shard 0, MPI_Fetch_and_op),
//                                 [1] trainers done (MPI_Accumulate SUM);
//                                 [2] checkpoint request bits (StepFlags, MPI_Accumulate BOR), [3] trainers
//                                 quiesced for it (SUM): async checkpoints, on shard 0;
//                                 per trainer t at 4+5t: pushed_seq (written by trainer t), applied_seq,
//                                 staleness of the last applied push (written by the server), clock (ssp, on
//                                 shard 0 only: steps trainer t finished in this pass), samples (sync with node
//                                 aggregation and row tables: trainer t's samples in the step, which weight its
//                                 row slots, the grads slot holding only its group's count).
//                                 Touched by atomic operations only, in one epoch for the whole run
//                                 (ps/control_words.h): no rank ever locks it.
//
// The row tables (table_plan.h) add three windows of their own, whatever their number: ps/table_windows.h.
//
// Who waits for whom, and in which order, over these words: exchange/step_protocol.h.
// Every access to a window's memory, local or remote, happens inside a lock epoch on that window (the control
// words: inside the one epoch ControlWords holds).
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <span>

#include "comm/layout.h"
#include "comm/window.h"
#include "ps/control_words.h"
#include "ps/shard_plan.h"
#include "ps/table_plan.h"
#include "ps/table_windows.h"

namespace pstrain::ps {

inline constexpr std::size_t kParamsHeader = 2;  // floats holding the int64 version
inline constexpr std::size_t kControlHeader = 4;
inline constexpr std::size_t kControlPerTrainer = 5;
inline constexpr std::size_t kChunkCounterIndex = 0;
inline constexpr std::size_t kDoneIndex = 1;
inline constexpr std::size_t kCheckpointRequestIndex = 2;
inline constexpr std::size_t kQuiescedIndex = 3;
enum ControlField : std::size_t { kPushedSeq = 0, kAppliedSeq = 1, kStaleness = 2, kClock = 3, kSamples = 4 };
inline constexpr std::int64_t kClockPassDone = std::int64_t{1} << 60;

inline std::size_t control_index(int trainer, ControlField field) {
  return kControlHeader + kControlPerTrainer * static_cast<std::size_t>(trainer) + field;
}
inline std::size_t control_size(int trainers) {
  return kControlHeader + kControlPerTrainer * trainers;
}
static_assert(sizeof(std::int64_t) == kParamsHeader * sizeof(float));
// A slot's words after the gradient: the sample count, then the base version (two floats, as in params' header).
inline constexpr std::size_t kSlotTrailer = 1 + kParamsHeader;
inline std::size_t slot_stride(std::size_t slice) {
  return slice + kSlotTrailer;
}
inline std::int64_t read_version(const float* header) {
  std::int64_t version = 0;
  std::memcpy(&version, header, sizeof version);
  return version;
}
inline void write_version(float* header, std::int64_t version) {
  std::memcpy(header, &version, sizeof version);
}

struct PsWindows {
  // Collective over `world`.
  PsWindows(MPI_Comm world, const comm::WorldLayout& layout, const ShardPlan& plan)
      : params(world, layout.is_server() ? kParamsHeader + plan.shard_size(layout.shard_index) : 0),
        grads(world, layout.is_server() ? layout.push_slots() * slot_stride(plan.shard_size(layout.shard_index)) : 0),
        control(world, layout.is_server() ? control_size(layout.trainers) : 0) {}

  comm::Window<float> params;
  comm::Window<float> grads;
  ControlWords control;
};

}  // namespace pstrain::ps
