#pragma once
// Server side of the parameter service: shard s owns its slice of the flat vector in its params window and runs
// the optimizer on it. See windows.h for the protocol.
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "comm/layout.h"
#include "optim/optimizer.h"
#include "ps/shard_plan.h"
#include "ps/windows.h"

namespace pstrain::ps {

struct ServerStats {
  std::int64_t updates = 0;
  double busy_seconds = 0;  // time spent summing and updating, not waiting
};

class ShardServer {
 public:
  // `initial` is the full flat vector; the server keeps its own slice of it. Call before the job's start barrier.
  ShardServer(PsWindows& windows, const ShardPlan& plan, const comm::WorldLayout& layout,
              std::unique_ptr<optim::Optimizer> optimizer, std::span<const float> initial);

  // Sync: `steps` rounds of [barrier, sum slots in trainer order, one update, barrier].
  void serve_sync(std::int64_t steps);
  // Async: applies each trainer's push as its own update until every trainer announced it is done. Between
  // polls that found nothing it sleeps `poll_interval`, so it neither burns a core nor delays a trainer longer.
  void serve_async(std::chrono::microseconds poll_interval);

  const ServerStats& stats() const { return stats_; }
  std::int64_t version() const { return version_; }

 private:
  void apply(std::span<const float> gradient);

  PsWindows& windows_;
  comm::WorldLayout layout_;
  std::size_t slice_size_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::vector<float> summed_;  // sync: the averaged gradient of one step
  std::int64_t version_ = 0;
  ServerStats stats_;
};

}  // namespace pstrain::ps
