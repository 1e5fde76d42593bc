#include "train/table_layout.h"

#include <algorithm>

#include "core/error.h"

namespace pstrain::train {

namespace {

bool tables_go_by_rows(const JobContext& job) {
  if (job.layout.pservers == 0 || job.layout.world_size == 1) return false;
  return job.config.table_exchange != "dense" && job.mode().has_servers;
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
  if (!tables.empty()) {
    // A trainer rewrites the batch's ids as places in its row caches (ps/table_client.h): only the tables may
    // read them.
    for (const nn::PlannedNode& node : job.model.nodes) {
      const bool reads_data =
          std::find(node.inputs.begin(), node.inputs.end(), nn::ModelPlan::kDataInput) != node.inputs.end();
      const bool is_table = node.parameters.size() == 1 && job.model.parameters[node.parameters[0]].row_table;
      if (reads_data && !is_table) {
        throw Error(ExitCode::kUsage,
                    cat("the servers hold the row tables by rows, but layer ", node.spec.name,
                        " also reads the data's ids; only row tables may (use --table-exchange dense)"));
      }
    }
  }
  return ps::TablePlan(std::move(tables), job.layout.pservers, job.config.batch_size);
}

ps::ShardPlan server_blocks(const JobContext& job) {
  std::vector<std::size_t> sizes;
  for (const nn::ParameterInfo& parameter : job.model.parameters) sizes.push_back(parameter.size);
  return ps::ShardPlan(sizes, job.layout.pservers, job.config.block_size, held_by_rows(job.model, job.tables));
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

std::vector<nn::ParameterInfo> dense_layout(const nn::ModelPlan& model, const ps::TablePlan& tables) {
  const std::vector<bool> by_rows = held_by_rows(model, tables);
  std::vector<nn::ParameterInfo> dense;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < model.parameters.size(); ++i) {
    if (by_rows[i]) continue;
    dense.push_back(model.parameters[i]);
    dense.back().offset = offset;
    offset += dense.back().size;
  }
  return dense;
}

std::vector<ps::RowCache> row_caches(const JobContext& job, std::size_t max_batch) {
  std::vector<ps::RowCache> caches;
  std::size_t offset = job.dense_count;
  for (std::size_t t = 0; t < job.tables.size(); ++t) {
    const ps::TableSpec& table = job.tables.table(t);
    const std::size_t rows = static_cast<std::size_t>(
        std::min<std::uint64_t>(table.rows, static_cast<std::uint64_t>(max_batch) * table.ids_per_sample));
    caches.push_back({offset, rows});
    offset += rows * table.width;
  }
  return caches;
}

nn::ModelPlan trainer_model_plan(const JobContext& job, std::size_t max_batch) {
  if (job.tables.empty()) return job.model;
  const std::vector<ps::RowCache> caches = row_caches(job, max_batch);
  nn::ModelPlan plan = job.model;
  std::size_t dense_offset = 0;
  for (nn::ParameterInfo& parameter : plan.parameters) {
    std::size_t t = 0;
    while (t < job.tables.size() && job.tables.table(t).name != parameter.name) ++t;
    if (t == job.tables.size()) {
      parameter.offset = dense_offset;
      dense_offset += parameter.size;
      continue;
    }
    parameter.shape.at(0) = caches[t].rows;
    parameter.size = caches[t].rows * parameter.shape.at(1);
    parameter.offset = caches[t].offset;
  }
  PSTRAIN_ASSERT(dense_offset == job.dense_count, dense_offset, " dense floats, the dense layout has ",
                 job.dense_count);
  // The layers read their tables' shapes from their own plans.
  for (nn::PlannedNode& node : plan.nodes) {
    for (std::size_t i = 0; i < node.parameters.size(); ++i) {
      node.plan.parameters.at(i).shape = plan.parameters[node.parameters[i]].shape;
    }
  }
  const ps::RowCache& last = caches.back();
  plan.parameter_count = last.offset + last.rows * job.tables.table(job.tables.size() - 1).width;
  return plan;
}

}  // namespace pstrain::train
