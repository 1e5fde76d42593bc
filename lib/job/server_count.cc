#include "job/server_count.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"

namespace pstrain::job {

namespace {

int half_the_ranks(int ranks) {
  return std::max(1, ranks / 2);
}

}  // namespace

int ranks_per_node(const ServerCountInputs& inputs) {
  const int nodes = std::clamp(inputs.nodes, 1, std::max(1, inputs.ranks));
  return (inputs.ranks + nodes - 1) / nodes;
}

std::pair<int, int> busiest_nodes(const ServerCountInputs& inputs, int servers) {
  if (inputs.node_of_rank.empty()) {
    const int r = ranks_per_node(inputs);
    return {std::min(servers, r), std::min(inputs.ranks - servers, r)};
  }
  PSTRAIN_ASSERT(static_cast<int>(inputs.node_of_rank.size()) == inputs.ranks, inputs.node_of_rank.size());
  std::map<int, int> servers_on, trainers_on;
  for (int rank = 0; rank < inputs.ranks; ++rank) {
    ++(rank < servers ? servers_on : trainers_on)[inputs.node_of_rank[static_cast<std::size_t>(rank)]];
  }
  const auto most = [](const std::map<int, int>& counts) {
    int largest = 0;
    for (const auto& [node, count] : counts) largest = std::max(largest, count);
    return largest;
  };
  return {most(servers_on), most(trainers_on)};
}

int trainer_nodes(const ServerCountInputs& inputs, int servers) {
  if (inputs.node_of_rank.empty()) {
    const int r = ranks_per_node(inputs);
    return (inputs.ranks + r - 1) / r - servers / r;  // the nodes in all less those holding only servers
  }
  std::set<int> nodes;
  for (int rank = servers; rank < inputs.ranks; ++rank)
    nodes.insert(inputs.node_of_rank[static_cast<std::size_t>(rank)]);
  return static_cast<int>(nodes.size());
}

double modeled_step_seconds(const ServerCountInputs& inputs, int servers) {
  PSTRAIN_ASSERT(servers >= 1 && servers < inputs.ranks, servers, " of ", inputs.ranks);
  const auto [servers_sharing, trainers_sharing] = busiest_nodes(inputs, servers);           // k and m
  const double trainers_per_server = static_cast<double>(inputs.ranks - servers) / servers;  // T / S
  const double bytes = inputs.dense_bytes;                                                   // B
  const double link = inputs.link_bytes_per_s;                                               // W
  const double update = inputs.update_bytes_per_s;                                           // U
  const double compute = inputs.step_flops / inputs.trainer_flops_per_s;                     // t_c
  if (inputs.summed_steps && inputs.node_pushes) {
    const double groups_per_server = static_cast<double>(trainer_nodes(inputs, servers)) / servers;  // G / S
    return compute + 2 * std::max(servers_sharing * groups_per_server, 1.0) * bytes / link +
           groups_per_server * bytes / update + 2 * (trainers_sharing - 1) * bytes / update;
  }
  if (inputs.summed_steps) {
    return compute +
           2 * std::max(servers_sharing * trainers_per_server, static_cast<double>(trainers_sharing)) * bytes / link +
           trainers_per_server * bytes / update;
  }
  const double trainer_cycle = compute + 2 * trainers_sharing * bytes / link;
  const double shard_work = trainers_per_server * bytes * std::max(servers_sharing / link, 1 / update);
  return std::max(trainer_cycle, shard_work / kAsyncShardBusyCeiling);
}

ServerCount choose_server_count(const ServerCountInputs& inputs) {
  ServerCount count;
  if (inputs.ranks < 2) return count;
  const int ceiling = half_the_ranks(inputs.ranks);
  if (inputs.nodes <= 1) {
    count.servers = ceiling;
    count.reason = "one node: half the ranks (the sizing rule models the network between nodes)";
    return count;
  }
  if (!(inputs.dense_bytes > 0) || !(inputs.step_flops > 0) || !(inputs.trainer_flops_per_s > 0) ||
      !(inputs.link_bytes_per_s > 0) || !(inputs.update_bytes_per_s > 0)) {
    count.servers = ceiling;
    count.reason = "half the ranks (the model's bytes or FLOPs are unknown)";
    return count;
  }
  double best_rate = 0;
  for (int servers = 1; servers <= ceiling; ++servers) {
    const double step = modeled_step_seconds(inputs, servers);
    const double rate = (inputs.ranks - servers) / step;
    if (rate > best_rate * (1 + 1e-9)) {  // the fewest servers among equals
      best_rate = rate;
      count.servers = servers;
      count.step_seconds = step;
    }
  }
  count.compute_seconds = inputs.step_flops / inputs.trainer_flops_per_s;
  count.reason = cat("sizing rule (docs/sizing.md): ", inputs.summed_steps ? "sync" : "async",
                     inputs.node_pushes ? " with node aggregation" : "", ", ", inputs.dense_bytes / 1e6,
                     " MB pushed and pulled per step, ", count.compute_seconds * 1e3, " ms of compute, ",
                     ranks_per_node(inputs), " ranks per node, link ", inputs.link_bytes_per_s / 1e9, " GB/s, updates ",
                     inputs.update_bytes_per_s / 1e9, " GB/s: modeled step ", count.step_seconds * 1e3, " ms");
  return count;
}

}  // namespace pstrain::job
