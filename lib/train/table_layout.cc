#include "train/table_layout.h"

#include "core/error.h"

namespace pstrain::train {

namespace {

bool tables_go_by_rows(const JobContext& job) {
  if (job.layout.pservers == 0 || job.layout.world_size == 1) return false;
  return job.config.table_exchange != "dense" && job.config.mode != Mode::kAllreduce;
}

}  // namespace

ps::TablePlan plan_row_tables(const JobContext& job) {
  if (!tables_go_by_rows(job)) return {};
  std::vector<ps::TableSpec> tables;
  for (const nn::PlannedNode& node : job.model.nodes) {
    for (const std::size_t index : node.parameters) {
      const nn::ParameterInfo& parameter = job.model.parameters[index];
      if (!parameter.row_table) continue;
      if (node.inputs.size() != 1 || node.inputs[0] != nn::ModelPlan::kDataInput) {
        if (job.config.table_exchange == "auto") continue;  // stays dense
        throw Error(ExitCode::kUsage,
                    cat("--table-exchange sparse: table ", parameter.name, " looks up ids that layer ",
                        job.model.nodes[static_cast<std::size_t>(node.inputs.at(0))].spec.name,
                        " computes; the servers can serve a table by rows only when it reads the data's ids "
                        "(use --table-exchange dense)"));
      }
      tables.push_back({parameter.name, parameter.offset, parameter.shape.at(0), parameter.shape.at(1),
                        nn::element_count(node.input_shapes[0])});
    }
  }
  return ps::TablePlan(std::move(tables), job.layout.pservers, job.config.batch_size);
}

std::vector<bool> held_by_rows(const nn::ModelPlan& model, const ps::TablePlan& tables) {
  std::vector<bool> marks(model.parameters.size(), false);
  for (std::size_t t = 0; t < tables.size(); ++t) {
    for (std::size_t i = 0; i < model.parameters.size(); ++i) {
      if (model.parameters[i].name == tables.table(t).name) marks[i] = true;
    }
  }
  return marks;
}

}  // namespace pstrain::train
