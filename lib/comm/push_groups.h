#pragma once
// Push groups (node-level aggregation, exchange/step_protocol.h "Node aggregation"): which trainers sum their
// gradients together before one of them, the group's leader, pushes the sum to the servers. A value computed once
// at the start from where every trainer runs, the same on every rank; each server holds one gradient slot per group
// (ps/windows.h), so its memory for gradients grows with the groups, not with the trainers.
//
// Groups are numbered by their leader, the lowest trainer in the group: group g's slot on every shard is slot g.
// With one group per trainer (aggregation off) trainer t is group t, alone: the slots of today.
#include <span>
#include <vector>

namespace pstrain::comm {

class PushGroups {
 public:
  PushGroups() = default;
  // Every trainer a group of its own (no aggregation).
  static PushGroups one_per_trainer(int trainers);
  // The trainers grouped by node: node_of_trainer[t] is the same number for the trainers of one node (any number,
  // e.g. the node's lowest world rank).
  static PushGroups by_node(std::span<const int> node_of_trainer);

  bool empty() const { return group_of_trainer_.empty(); }
  int trainers() const { return static_cast<int>(group_of_trainer_.size()); }
  int groups() const { return static_cast<int>(leaders_.size()); }
  // Trainer t's group: its slot on every server.
  int group_of(int trainer) const { return group_of_trainer_.at(static_cast<std::size_t>(trainer)); }
  // The trainers of group g, in increasing order (the first is the leader).
  std::vector<int> members(int group) const;
  int leader(int group) const { return leaders_.at(static_cast<std::size_t>(group)); }
  // Some group holds more than one trainer: the servers see fewer pushes than there are trainers.
  bool aggregates() const { return groups() < trainers(); }

 private:
  std::vector<int> group_of_trainer_;
  std::vector<int> leaders_;  // per group, its lowest trainer
};

}  // namespace pstrain::comm
