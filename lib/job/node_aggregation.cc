#include "job/node_aggregation.h"

#include <vector>

#include "config/modes.h"
#include "core/error.h"

namespace pstrain::train {

comm::PushGroups plan_push_groups(const TrainConfig& config, const comm::WorldLayout& layout,
                                  std::span<const int> node_of_rank) {
  const ModeTraits& mode = mode_traits(config.mode);
  if (config.node_aggregation == NodeAggregation::kOff || layout.pservers == 0 || !mode.has_servers ||
      !mode.common_steps) {
    return {};
  }
  std::vector<int> node_of_trainer;
  for (int trainer = 0; trainer < layout.trainers; ++trainer) {
    node_of_trainer.push_back(node_of_rank[static_cast<std::size_t>(layout.trainer_rank(trainer))]);
  }
  comm::PushGroups groups = comm::PushGroups::by_node(node_of_trainer);
  if (config.node_aggregation == NodeAggregation::kOn) return groups;
  // auto: a run on one node keeps its bits, and --overlap true its streamed blocks.
  if (config.overlap == Overlap::kOn || groups.groups() < 2 || !groups.aggregates()) return {};
  return groups;
}

comm::PushGroups push_groups_with_tables(const TrainConfig& config, const comm::PushGroups& groups,
                                         bool tables_by_rows) {
  if (!tables_by_rows || groups.empty()) return groups;
  if (config.node_aggregation == NodeAggregation::kOn) {
    throw Error(ExitCode::kUsage,
                "--node-aggregation on: this model has a table the servers hold by rows, whose updates weight each "
                "trainer's rows by that trainer's samples; a node's summed push does not carry them. Use "
                "--node-aggregation off (or --table-exchange dense)");
  }
  return {};
}

std::string describe_push_groups(const TrainConfig& config, const comm::PushGroups& groups) {
  return cat(groups.groups(), " push groups for ", groups.trainers(), " trainers (--node-aggregation ",
             config.node_aggregation == NodeAggregation::kOn ? "on" : "auto: trainers on several nodes", ")");
}

}  // namespace pstrain::train
