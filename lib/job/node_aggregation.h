#pragma once
// --node-aggregation: which trainers push together (comm/push_groups.h), decided once at the start from where
// every rank runs, the same on every rank. The protocol: exchange/step_protocol.h "Node aggregation".
//   on:   the trainers of each node form a group (sync and geo only: config/train_config.cc refuses the rest);
//   auto: the same where it changes something real: the trainers span several nodes and some node holds two or
//         more (every run on one node keeps the bits it had; --overlap true keeps its streamed blocks);
//   off:  every trainer alone.
// A table the servers hold by rows keeps its row slots per trainer, each weighted by its trainer's samples
// (ps/windows.h's control words carry them); only the dense part goes through the groups.
#include <span>
#include <string>

#include "comm/layout.h"
#include "comm/push_groups.h"
#include "config/train_config.h"

namespace pstrain::job {

// `node_of_rank`: every world rank's node (any number shared by the ranks of one node). Empty groups: every trainer
// alone (comm::WorldLayout::push_slots).
comm::PushGroups plan_push_groups(const config::TrainConfig& config, const comm::WorldLayout& layout,
                                  std::span<const int> node_of_rank);

// The line the lead trainer logs when pushes are aggregated: "G push groups for T trainers (why)".
std::string describe_push_groups(const config::TrainConfig& config, const comm::PushGroups& groups);

}  // namespace pstrain::job
