#pragma once
// How many parameter-server shards `--num-pservers -1` chooses: the sizing rule of docs/sizing.md as a pure
// function of the world, the model's bytes and FLOPs and three rates of the machine.
//
// Per step every trainer pushes and pulls the model's dense bytes B; a shard of B/S bytes takes in T*B/S bytes,
// gives out as many, and sums T slots (sync: one update of the sum) or applies T updates (async, ssp). Where the
// ranks fill nodes in order (servers on the first nodes), the k = min(S, r) servers of a node share its link
// (r ranks per node) and the m = min(T, r) trainers of a node share theirs. With the trainer's compute t_c:
//   sync (the one-sided step: compute, push, sum, pull one after another):
//     step(S) = t_c + 2 * max(k*T/S, m) * B / W + T * B / (S * U)
//   sync with node aggregation (--node-aggregation, exchange/step_protocol.h): the G nodes holding trainers push and
//   pull once each, through their leader, which first takes in and sums its node's m - 1 other gradients and
//   afterwards hands the parameters to them (both at the shard's rate U, the memory's speed):
//     step(S) = t_c + 2 * max(k*G/S, 1) * B / W + G * B / (S * U) + 2 * (m - 1) * B / U
//   async, ssp (a shard works while the trainers compute; its link carries in and out at once), a shard kept at
//   most a fraction rho of the time busy (pushes queue behind a busier one; rho fitted to the dry-run, below):
//     step(S) = max(t_c + 2 * m * B / W,  T * B / S * max(k / W, 1 / U) / rho)
// and the count is the S in [1, max(1, ranks / 2)] with the most samples per second, T / step(S) (the fewest
// servers among equals). Half the ranks, the former default, is the upper end: the rule only ever gives fewer.
// Closed form where the sync term T*B/(S*W') dominates: T/S = sqrt(t_c / tau), tau = B * (2/W' + 1/U).
//
// On one node (every rank on the same host) every byte crosses the same memory: the rule's terms no longer depend
// on S, the ranks share the node's processors, which the rule does not model, so the count stays half the ranks,
// as it always was (docs/sizing.md, "Where the rule is wrong").
#include <string>
#include <utility>
#include <vector>

namespace pstrain::job {

// rho: at the count where async shards are just busy all the time (rho = 1), the dry-run's pushes waited up to a
// third of the step (ResNet at a GPU's 30 ms a step, 64 ranks: 10 shards 27.9k samples/s, 16 shards 42.3k); 0.65
// picks the best simulated count, or one within 12% of it, in the six async jobs of docs/sizing.md.
inline constexpr double kAsyncShardBusyCeiling = 0.65;

struct ServerCountInputs {
  int ranks = 1;  // the world: servers + trainers
  int nodes = 1;  // hosts the ranks run on
  // Where each rank runs (a node number per rank, ranks entries), as mpirun placed them: k and m are then counted
  // (the most servers, the most trainers on one node). Empty: ranks fill the nodes in order, ceil(ranks / nodes)
  // each (mpirun's default by-slot mapping).
  std::vector<int> node_of_rank;
  double dense_bytes = 0;      // B: what a trainer pushes, and pulls, per step (the model less its row tables)
  double step_flops = 0;       // a trainer's forward and backward of one batch: 3 x forward FLOPs x batch
  bool summed_steps = true;    // sync: one summed update a step; false: async/ssp, one update per push
  bool node_pushes = false;    // sync with node aggregation: one push and one pull per node holding trainers
  double trainer_flops_per_s;  // a trainer's compute rate (t_c = step_flops / it)
  double link_bytes_per_s;     // W: one node's network link, each way
  double update_bytes_per_s;   // U: slot bytes a shard sums (sync) or applies (async) per second
};

struct ServerCount {
  int servers = 0;
  double step_seconds = 0;     // the rule's step at that count (0 where the rule was not applied)
  double compute_seconds = 0;  // t_c
  std::string reason;          // one line for the log: why this count
};

// The ranks per node the rule assumes where node_of_rank is empty: ceil(ranks / nodes).
int ranks_per_node(const ServerCountInputs& inputs);
// The most servers (first) and the most trainers (second) on one node with `servers` shards on ranks [0, servers).
std::pair<int, int> busiest_nodes(const ServerCountInputs& inputs, int servers);
// The nodes holding trainers with `servers` shards on ranks [0, servers): G, the pushes per step with node
// aggregation.
int trainer_nodes(const ServerCountInputs& inputs, int servers);
// The rule's step time with `servers` shards (1 <= servers < ranks).
double modeled_step_seconds(const ServerCountInputs& inputs, int servers);
// The count (>= 1 for 2 or more ranks; 0 for one rank, which trains alone).
ServerCount choose_server_count(const ServerCountInputs& inputs);

}  // namespace pstrain::job
