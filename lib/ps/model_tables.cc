#include "ps/model_tables.h"

#include <algorithm>

#include "core/error.h"

namespace pstrain::ps {

namespace {

bool reads_data(const nn::PlannedNode& node) {
  return std::find(node.inputs.begin(), node.inputs.end(), nn::ModelPlan::kDataInput) != node.inputs.end();
}

void check_only_tables_read_ids(const nn::ModelPlan& model, std::string_view remedy) {
  for (const nn::PlannedNode& node : model.nodes) {
    const bool is_table = node.parameters.size() == 1 && model.parameters[node.parameters[0]].row_table;
    if (reads_data(node) && !is_table) {
      throw Error(ExitCode::kUsage, cat("the servers hold the row tables by rows, but layer ", node.spec.name,
                                        " also reads the data's ids; only row tables may (", remedy, ")"));
    }
  }
}

// A table of bags (embedding_bag): its ids are the batch's categorical fields, hashed into its rows; a sample
// looks up at most the longest bags of the fields it reads.
TableSpec bag_table(const nn::PlannedNode& node, const nn::ParameterInfo& parameter,
                    std::span<const std::uint64_t> longest_bags, std::string_view remedy) {
  std::size_t ids_per_sample = 0;
  for (const std::size_t field : node.plan.categorical_fields) {
    if (field >= longest_bags.size()) {
      throw Error(ExitCode::kUsage, cat("table ", parameter.name, " looks up bags of categorical field ", field,
                                        ", and the servers can hold it by rows only for data whose fields they know "
                                        "(",
                                        remedy, ")"));
    }
    ids_per_sample += static_cast<std::size_t>(longest_bags[field]);
  }
  return {parameter.name,
          parameter.offset,
          parameter.shape.at(0),
          parameter.shape.at(1),
          std::max<std::size_t>(ids_per_sample, 1),
          node.plan.categorical_fields,
          node.plan.id_hash_seed};
}

}  // namespace

TablePlan plan_model_tables(const nn::ModelPlan& model, int servers, std::size_t batch,
                            std::span<const std::uint64_t> longest_bags, ComputedIdTables rule,
                            std::string_view remedy) {
  std::vector<TableSpec> tables;
  bool single_ids = false;
  for (const nn::PlannedNode& node : model.nodes) {
    for (const std::size_t index : node.parameters) {
      const nn::ParameterInfo& parameter = model.parameters[index];
      if (!parameter.row_table) continue;
      if (!node.plan.categorical_fields.empty()) {  // embedding_bag: bags of raw ids, hashed into its rows
        if (longest_bags.empty() && rule == ComputedIdTables::kStayDense) continue;
        tables.push_back(bag_table(node, parameter, longest_bags, remedy));
        continue;
      }
      if (node.inputs.size() != 1 || node.inputs[0] != nn::ModelPlan::kDataInput) {
        if (rule == ComputedIdTables::kStayDense) continue;
        throw Error(ExitCode::kUsage,
                    cat("table ", parameter.name, " looks up ids that layer ",
                        model.nodes[static_cast<std::size_t>(node.inputs.at(0))].spec.name,
                        " computes; the servers can serve a table by rows only when it reads the data's ids (", remedy,
                        ")"));
      }
      tables.push_back({parameter.name, parameter.offset, parameter.shape.at(0), parameter.shape.at(1),
                        nn::element_count(node.input_shapes[0])});
      single_ids = true;
    }
  }
  if (single_ids) check_only_tables_read_ids(model, remedy);
  return TablePlan(std::move(tables), servers, batch);
}

std::vector<bool> held_by_rows(const nn::ModelPlan& model, const TablePlan& tables) {
  std::vector<bool> marks(model.parameters.size(), false);
  for (std::size_t t = 0; t < tables.size(); ++t) {
    for (std::size_t i = 0; i < model.parameters.size(); ++i) {
      if (model.parameters[i].name == tables.table(t).name) marks[i] = true;
    }
  }
  return marks;
}

std::vector<nn::ParameterInfo> dense_layout(const nn::ModelPlan& model, const TablePlan& tables) {
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

std::vector<RowCache> row_caches(const TablePlan& tables, std::size_t dense_count, std::size_t max_batch) {
  std::vector<RowCache> caches;
  std::size_t offset = dense_count;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const TableSpec& table = tables.table(t);
    const std::size_t rows = static_cast<std::size_t>(
        std::min<std::uint64_t>(table.rows, static_cast<std::uint64_t>(max_batch) * table.ids_per_sample));
    caches.push_back({offset, rows});
    offset += rows * table.width;
  }
  return caches;
}

nn::ModelPlan cut_model_plan(const nn::ModelPlan& model, const TablePlan& tables, std::size_t max_batch) {
  if (tables.empty()) return model;
  std::size_t dense_count = 0;
  for (const nn::ParameterInfo& parameter : dense_layout(model, tables)) dense_count += parameter.size;
  const std::vector<RowCache> caches = row_caches(tables, dense_count, max_batch);
  nn::ModelPlan plan = model;
  std::size_t dense_offset = 0;
  std::vector<std::size_t> table_of(plan.parameters.size(), tables.size());  // tables.size(): a dense parameter
  for (std::size_t p = 0; p < plan.parameters.size(); ++p) {
    nn::ParameterInfo& parameter = plan.parameters[p];
    std::size_t& t = table_of[p];
    t = 0;
    while (t < tables.size() && tables.table(t).name != parameter.name) ++t;
    if (t == tables.size()) {
      parameter.offset = dense_offset;
      dense_offset += parameter.size;
      continue;
    }
    parameter.shape.at(0) = caches[t].rows;
    parameter.size = caches[t].rows * parameter.shape.at(1);
    parameter.offset = caches[t].offset;
  }
  // The layers read their tables' shapes from their own plans; a table of bags also which table it is, to find
  // its lookups' cache rows (nn/cached_lookups.h).
  for (nn::PlannedNode& node : plan.nodes) {
    for (std::size_t i = 0; i < node.parameters.size(); ++i) {
      node.plan.parameters.at(i).shape = plan.parameters[node.parameters[i]].shape;
      const std::size_t t = table_of[node.parameters[i]];
      if (t < tables.size() && tables.table(t).reads_bags()) node.plan.row_table = t;
    }
  }
  const RowCache& last = caches.back();
  plan.parameter_count = last.offset + last.rows * tables.table(tables.size() - 1).width;
  return plan;
}

}  // namespace pstrain::ps
