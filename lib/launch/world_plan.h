#pragma once
// The world the driver launches on a set of usable hosts: how many ranks, how many of them are parameter-server
// shards, and which host each rank runs on.
//
// The split, one rule for every world size (passed to pstrain as --num-pservers):
//  - all-reduce (--mode allreduce) and one rank (local training): no servers;
//  - the user gave --num-pservers P: P servers at every size (the driver then needs at least P + 1 ranks);
//  - the user gave --pserver-ratio R: servers = max(1, floor(ranks * R)), at least one trainer;
//  - otherwise pstrain chooses (--num-pservers -1: the sizing rule of lib/job/default_pservers.h, half the ranks
//    on one node), so an elastic run has the layout a plain run on the same hosts would have, and the rule lives
//    in one place. The driver learns the count from the job's start line (JobOutput::layout).
// Placement: ranks [0, servers) are the servers (pstrain's layout). Each host gets ranks up to its slots, hosts in
// the order discovery listed them, at most max_np ranks in all; the servers are dealt one per host in turn (so
// they spread over the hosts instead of filling the first one), then the trainers fill the remaining slots. Where
// pstrain chooses the count, every rank is dealt one per host in turn: whatever count it picks, its servers are
// placed as a known count would place them, and the rule counts the servers and trainers per node from there.
// Open MPI's sequential mapper (--map-by seq) puts rank i on line i of the hostfile written from rank_hosts.
#include <optional>
#include <string>
#include <vector>

#include "launch/host_list.h"

namespace pstrain::launch {

struct LayoutRule {
  std::optional<int> fixed_pservers;    // --num-pservers given by the user
  std::optional<double> pserver_ratio;  // --pserver-ratio given by the user
  bool no_servers = false;              // a mode without servers (--mode allreduce): every rank is a trainer
};

struct Layout {
  int pservers = 0;
  int trainers = 0;
  int ranks() const { return pservers + trainers; }
  bool operator==(const Layout&) const = default;
};

struct World {
  HostList hosts;                       // the hosts used, slots = ranks placed there
  std::vector<std::string> rank_hosts;  // rank -> host
  std::optional<Layout> layout;         // none: pstrain chooses (--num-pservers -1); the job's start line tells
  int ranks() const { return static_cast<int>(rank_hosts.size()); }
};

// The smallest number of ranks the rule can run with (1, or P + 1 with a fixed P).
int smallest_world(const LayoutRule& rule);
// The split for `ranks` ranks (ranks >= smallest_world(rule)); none where pstrain chooses it.
std::optional<Layout> layout_for(int ranks, const LayoutRule& rule);
// The world on `usable` hosts with at most max_np ranks (usable must hold at least one slot).
World plan_world(const HostList& usable, int max_np, const LayoutRule& rule);
// Does the running world still fit `usable`: every host it uses still listed with at least the slots it uses?
bool world_fits(const World& world, const HostList& usable);

}  // namespace pstrain::launch
