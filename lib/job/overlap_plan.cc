#include "job/overlap_plan.h"

#include <mpi.h>

#include <string>

#include "comm/node_sharing.h"
#include "core/log.h"
#include "job/node_aggregation.h"

namespace pstrain::job {

namespace {

struct Choice {
  bool streamed = false;
  std::string why;
};

// --overlap true and false decide; auto asks `automatic`, which is collective where it asks MPI.
template <typename Automatic>
Choice choose(config::Overlap overlap, Automatic automatic) {
  if (overlap == config::Overlap::kOn) return {true, "--overlap true"};
  if (overlap == config::Overlap::kOff) return {false, "--overlap false"};
  return automatic();
}

// One line from the lead trainer: "<what>: <how> (<why>)".
bool logged(const comm::WorldLayout& layout, const char* what, const Choice& choice, const char* streamed,
            const char* whole) {
  if (layout.is_lead_trainer()) {
    log_info(what, ": ", choice.streamed ? streamed : whole, " (", choice.why, ")");
  }
  return choice.streamed;
}

ps::SyncTransport plan_sync(const config::TrainConfig& config, const comm::WorldLayout& layout) {
  if (layout.aggregates_pushes()) {  // the same on every rank: the push groups are
    if (layout.is_lead_trainer()) {
      log_info(modes::mode_traits(config.mode).trainers_step_alone ? "geo meetings" : "sync steps",
               ": one-sided, each node's leader pushes its trainers' sum and gets the parameters for them (",
               describe_push_groups(config, layout.push_groups), ")");
    }
    return ps::SyncTransport::kOneSided;
  }
  const Choice choice = choose(config.overlap, [] {
    if (comm::every_rank_has_a_processor(MPI_COMM_WORLD)) return Choice{true, "every rank has a processor of its own"};
    return Choice{false,
                  "ranks share processors on a node, so a streaming server would wait for one; --overlap "
                  "true streams anyway"};
  });
  // A geo trainer meets the servers after its own optimizer step: the blocks go then, as messages or one-sided.
  const bool meetings = modes::mode_traits(config.mode).trainers_step_alone;
  return logged(layout, meetings ? "geo meetings" : "sync steps", choice,
                meetings ? "blocks as messages" : "blocks streamed behind the computation",
                meetings ? "one-sided" : "one-sided, after the backward pass")
             ? ps::SyncTransport::kStreamed
             : ps::SyncTransport::kOneSided;
}

bool plan_pushes(const config::TrainConfig& config, const comm::WorldLayout& layout) {
  const Choice choice = choose(config.overlap, [] {
    if (comm::all_ranks_on_one_node(MPI_COMM_WORLD)) {
      return Choice{true, "every rank on one node: the puts are copies in its memory"};
    }
    return Choice{false, "ranks on several nodes; --overlap true streams anyway"};
  });
  return logged(layout, "pushes", choice, "gradient blocks put during the backward pass",
                "whole, after the backward pass");
}

// 256 KB: a few buckets for the mlp preset (0.94 MB), so that the first ones travel while the rest is computed.
constexpr std::size_t kAllreduceBucketFloats = 65536;

bool plan_buckets(const config::TrainConfig& config, const comm::WorldLayout& layout) {
  Choice choice = choose(config.overlap, [] {
    return Choice{false,
                  "--overlap auto: every trainer's processor computes, none is free to sum behind the "
                  "backward pass; --overlap true streams"};
  });
  if (choice.streamed) {
    choice.why += layout.trainers > 2 ? "; with more than 2 trainers not the bits of --overlap false"
                                      : "; the bits of --overlap false";
  }
  return logged(layout, "all-reduce", choice, "buckets summed during the backward pass",
                "one sum after the backward pass");
}

}  // namespace

OverlapPlan plan_overlap(const config::TrainConfig& config, const comm::WorldLayout& layout) {
  OverlapPlan plan;
  switch (modes::mode_traits(config.mode).overlap) {
    case modes::OverlapKind::kSyncBlocks: plan.sync = plan_sync(config, layout); break;
    case modes::OverlapKind::kPushes: plan.stream_pushes = plan_pushes(config, layout); break;
    case modes::OverlapKind::kAllreduceBuckets:
      if (plan_buckets(config, layout)) plan.allreduce_bucket_floats = kAllreduceBucketFloats;
      break;
  }
  return plan;
}

}  // namespace pstrain::job
