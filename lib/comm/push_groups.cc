#include "comm/push_groups.h"

#include <map>

namespace pstrain::comm {

PushGroups PushGroups::one_per_trainer(int trainers) {
  PushGroups groups;
  for (int trainer = 0; trainer < trainers; ++trainer) {
    groups.group_of_trainer_.push_back(trainer);
    groups.leaders_.push_back(trainer);
  }
  return groups;
}

PushGroups PushGroups::by_node(std::span<const int> node_of_trainer) {
  PushGroups groups;
  std::map<int, int> group_of_node;  // in order of first appearance, which is the order of the leaders
  for (std::size_t trainer = 0; trainer < node_of_trainer.size(); ++trainer) {
    const auto [found, added] = group_of_node.try_emplace(node_of_trainer[trainer], groups.groups());
    if (added) groups.leaders_.push_back(static_cast<int>(trainer));
    groups.group_of_trainer_.push_back(found->second);
  }
  return groups;
}

std::vector<int> PushGroups::members(int group) const {
  std::vector<int> found;
  for (int trainer = 0; trainer < trainers(); ++trainer) {
    if (group_of(trainer) == group) found.push_back(trainer);
  }
  return found;
}

}  // namespace pstrain::comm
