#include "job/node_aggregation.h"

#include <vector>

#include "core/error.h"
#include "modes/traits.h"

namespace pstrain::job {

comm::PushGroups plan_push_groups(const config::TrainConfig& config, const comm::WorldLayout& layout,
                                  std::span<const int> node_of_rank) {
  const modes::ModeTraits& mode = modes::mode_traits(config.mode);
  if (config.node_aggregation == config::NodeAggregation::kOff || layout.pservers == 0 || !mode.has_servers ||
      !mode.common_steps) {
    return {};
  }
  std::vector<int> node_of_trainer;
  node_of_trainer.reserve(static_cast<std::size_t>(layout.trainers));
  for (int trainer = 0; trainer < layout.trainers; ++trainer) {
    node_of_trainer.push_back(node_of_rank[static_cast<std::size_t>(layout.trainer_rank(trainer))]);
  }
  comm::PushGroups groups = comm::PushGroups::by_node(node_of_trainer);
  if (config.node_aggregation == config::NodeAggregation::kOn) return groups;
  // auto: a run on one node keeps its bits, and --overlap true its streamed blocks.
  if (config.overlap == config::Overlap::kOn || groups.groups() < 2 || !groups.aggregates()) return {};
  return groups;
}

std::string describe_push_groups(const config::TrainConfig& config, const comm::PushGroups& groups) {
  return cat(groups.groups(), groups.groups() == 1 ? " push group" : " push groups", " for ", groups.trainers(),
             " trainers (--node-aggregation ",
             config.node_aggregation == config::NodeAggregation::kOn ? "on" : "auto: trainers on several nodes", ")");
}

}  // namespace pstrain::job
