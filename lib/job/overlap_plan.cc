#include "job/overlap_plan.h"

#include <mpi.h>

#include <string>

#include "comm/node_sharing.h"
#include "core/log.h"

namespace pstrain::train {

namespace {

struct Choice {
  bool streamed = false;
  std::string why;
};

// --overlap true and false decide; auto asks `automatic`, which is collective where it asks MPI.
template <typename Automatic>
Choice choose(const JobContext& job, Automatic automatic) {
  if (job.config.overlap == Overlap::kOn) return {true, "--overlap true"};
  if (job.config.overlap == Overlap::kOff) return {false, "--overlap false"};
  return automatic();
}

// One line from the lead trainer: "<what>: <how> (<why>)".
bool logged(const JobContext& job, const char* what, const Choice& choice, const char* streamed, const char* whole) {
  if (job.layout.is_lead_trainer()) {
    log_info(what, ": ", choice.streamed ? streamed : whole, " (", choice.why, ")");
  }
  return choice.streamed;
}

ps::SyncTransport plan_sync(const JobContext& job) {
  const Choice choice = choose(job, [] {
    if (comm::every_rank_has_a_processor(MPI_COMM_WORLD)) return Choice{true, "every rank has a processor of its own"};
    return Choice{false,
                  "ranks share processors on a node, so a streaming server would wait for one; --overlap "
                  "true streams anyway"};
  });
  // A geo trainer meets the servers after its own optimizer step: the blocks go then, as messages or one-sided.
  const bool meetings = job.mode().trainers_step_alone;
  return logged(job, meetings ? "geo meetings" : "sync steps", choice,
                meetings ? "blocks as messages" : "blocks streamed behind the computation",
                meetings ? "one-sided" : "one-sided, after the backward pass")
             ? ps::SyncTransport::kStreamed
             : ps::SyncTransport::kOneSided;
}

bool plan_pushes(const JobContext& job) {
  const Choice choice = choose(job, [] {
    if (comm::all_ranks_on_one_node(MPI_COMM_WORLD)) {
      return Choice{true, "every rank on one node: the puts are copies in its memory"};
    }
    return Choice{false, "ranks on several nodes; --overlap true streams anyway"};
  });
  return logged(job, "pushes", choice, "gradient blocks put during the backward pass",
                "whole, after the backward pass");
}

// 256 KB: a few buckets for the mlp preset (0.94 MB), so that the first ones travel while the rest is computed.
constexpr std::size_t kAllreduceBucketFloats = 65536;

bool plan_buckets(const JobContext& job) {
  Choice choice = choose(job, [] {
    return Choice{false,
                  "--overlap auto: every trainer's processor computes, none is free to sum behind the "
                  "backward pass; --overlap true streams"};
  });
  if (choice.streamed) {
    choice.why += job.layout.trainers > 2 ? "; with more than 2 trainers not the bits of --overlap false"
                                          : "; the bits of --overlap false";
  }
  return logged(job, "all-reduce", choice, "buckets summed during the backward pass",
                "one sum after the backward pass");
}

}  // namespace

OverlapPlan plan_overlap(const JobContext& job) {
  OverlapPlan plan;
  switch (job.mode().overlap) {
    case OverlapKind::kSyncBlocks: plan.sync = plan_sync(job); break;
    case OverlapKind::kPushes: plan.stream_pushes = plan_pushes(job); break;
    case OverlapKind::kAllreduceBuckets:
      if (plan_buckets(job)) plan.allreduce_bucket_floats = kAllreduceBucketFloats;
      break;
  }
  return plan;
}

}  // namespace pstrain::train
