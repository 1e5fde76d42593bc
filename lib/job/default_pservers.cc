#include "job/default_pservers.h"

#include <algorithm>
#include <exception>
#include <set>

#include "core/error.h"
#include "data/shard.h"
#include "modes/traits.h"
#include "nn/model_plan.h"
#include "optim/optimizer.h"
#include "run_common/model_factory.h"

namespace pstrain::job {

namespace {

double update_bytes_per_second(const config::TrainConfig& config) {
  if (modes::mode_traits(config.mode).common_steps) return kSyncSumBytesPerSecond;
  const std::string& kind = config.optimizer.kind;
  return kind == "adam" || kind == "adagrad" || kind == optim::kRowwiseAdagrad ? kAsyncAdamBytesPerSecond
                                                                               : kAsyncSgdBytesPerSecond;
}

// The bytes a trainer pushes per step: every parameter but the row tables the servers hold by rows
// (--table-exchange other than dense; what those ship per step, the rows a batch touches, is left out).
double dense_bytes(const config::TrainConfig& config, const nn::ModelPlan& plan) {
  double bytes = 0;
  for (const nn::ParameterInfo& parameter : plan.parameters) {
    if (parameter.row_table && config.table_exchange != "dense") continue;
    bytes += static_cast<double>(parameter.size) * sizeof(float);
  }
  return bytes;
}

}  // namespace

ServerCountInputs server_count_inputs(const config::TrainConfig& config, const std::vector<int>& node_of_rank) {
  ServerCountInputs inputs;
  inputs.ranks = static_cast<int>(node_of_rank.size());
  inputs.nodes = static_cast<int>(std::set<int>(node_of_rank.begin(), node_of_rank.end()).size());
  inputs.node_of_rank = node_of_rank;
  const int ranks = inputs.ranks;
  const int nodes = inputs.nodes;
  inputs.summed_steps = modes::mode_traits(config.mode).common_steps;
  // Across nodes (where the rule applies) --node-aggregation auto aggregates unless --overlap true streams the
  // blocks (job/node_aggregation.h); a node of one trainer is its own group, which the rule's terms allow for.
  inputs.node_pushes =
      inputs.summed_steps &&
      (config.node_aggregation == config::NodeAggregation::kOn ||
       (config.node_aggregation == config::NodeAggregation::kAuto && config.overlap != config::Overlap::kOn));
  inputs.trainer_flops_per_s = config.device == "cpu" ? kCpuTrainerFlopsPerSecond : kGpuTrainerFlopsPerSecond;
  inputs.link_bytes_per_s = kNodeLinkBytesPerSecond;
  inputs.update_bytes_per_s = update_bytes_per_second(config);
  if (nodes > 1 && ranks > 1) {
    const data::ShardMeta meta = data::read_shard_meta(data::test_shard_path(config.data_dir));
    const nn::ModelPlan plan = run_common::plan_job_model(config, meta);
    inputs.dense_bytes = dense_bytes(config, plan);
    inputs.step_flops = 3 * plan.forward_flops * static_cast<double>(config.batch_size);
  }
  return inputs;
}

ServerCount default_server_count(const config::TrainConfig& config, const std::vector<int>& node_of_rank) {
  const int ranks = static_cast<int>(node_of_rank.size());
  try {
    return choose_server_count(server_count_inputs(config, node_of_rank));
  } catch (const std::exception& error) {  // HDF5 and file errors too: the job's planning reports them
    ServerCount count;
    count.servers = std::max(1, ranks / 2);
    count.reason = cat("half the ranks (the model could not be planned for the sizing rule: ", error.what(), ")");
    return count;
  }
}

}  // namespace pstrain::job
