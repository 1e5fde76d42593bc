#include "launch/world_plan.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace pstrain::launch {

int smallest_world(const LayoutRule& rule) {
  if (rule.no_servers || !rule.fixed_pservers) return 1;
  return *rule.fixed_pservers + 1;
}

std::optional<Layout> layout_for(int ranks, const LayoutRule& rule) {
  PSTRAIN_ASSERT(ranks >= smallest_world(rule), "ranks ", ranks, " below the smallest world ", smallest_world(rule));
  if (rule.no_servers || ranks == 1) return Layout{0, ranks};
  if (rule.fixed_pservers) return Layout{*rule.fixed_pservers, ranks - *rule.fixed_pservers};
  if (!rule.pserver_ratio) return std::nullopt;
  const int servers = std::clamp(static_cast<int>(std::floor(ranks * *rule.pserver_ratio)), 1, ranks - 1);
  return Layout{servers, ranks - servers};
}

World plan_world(const HostList& usable, int max_np, const LayoutRule& rule) {
  World world;
  int left = std::min(max_np, total_slots(usable));
  PSTRAIN_ASSERT(left >= 1, "no slot to plan a world on");
  for (const Host& host : usable) {
    if (left == 0) break;
    const int take = std::min(host.slots, left);
    world.hosts.push_back({host.name, take});
    left -= take;
  }
  const int ranks = total_slots(world.hosts);
  world.layout = layout_for(ranks, rule);
  // Servers one per host in turn, then trainers into what is left of each host, in host order. An unknown count:
  // every rank one per host in turn (any first ranks pstrain makes servers are then spread as above).
  const int dealt_in_turn = world.layout ? world.layout->pservers : ranks;
  std::vector<int> free(world.hosts.size());
  for (std::size_t h = 0; h < world.hosts.size(); ++h) free[h] = world.hosts[h].slots;
  std::size_t next = 0;
  for (int dealt = 0; dealt < dealt_in_turn; ++dealt) {
    while (free[next % free.size()] == 0) ++next;
    const std::size_t h = next++ % free.size();
    --free[h];
    world.rank_hosts.push_back(world.hosts[h].name);
  }
  for (std::size_t h = 0; h < world.hosts.size(); ++h) {
    for (; free[h] > 0; --free[h]) world.rank_hosts.push_back(world.hosts[h].name);
  }
  return world;
}

bool world_fits(const World& world, const HostList& usable) {
  return std::all_of(world.hosts.begin(), world.hosts.end(), [&](const Host& used) {
    const Host* listed = find_host(usable, used.name);
    return listed != nullptr && listed->slots >= used.slots;
  });
}

}  // namespace pstrain::launch
