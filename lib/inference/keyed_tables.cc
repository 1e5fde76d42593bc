#include "inference/keyed_tables.h"

#include <algorithm>
#include <limits>

#include "checkpoint/pass_folder.h"
#include "core/error.h"

namespace pstrain::inference {

namespace {

// The embedding_bag node whose table is `name`, or plan.nodes.size().
std::size_t table_node(const nn::ModelPlan& plan, const std::string& name) {
  for (std::size_t n = 0; n < plan.nodes.size(); ++n) {
    const nn::PlannedNode& node = plan.nodes[n];
    if (node.plan.categorical_fields.empty() || node.parameters.size() != 1) continue;
    if (plan.parameters[node.parameters[0]].name == name) return n;
  }
  return plan.nodes.size();
}

// Gives table `table` of node `n` `rows` rows, in the flat layout and in its layer's plan; the parameters after it
// move.
void resize_table(nn::ModelPlan& plan, std::size_t n, std::uint64_t rows, std::size_t table) {
  nn::PlannedNode& node = plan.nodes[n];
  nn::ParameterInfo& parameter = plan.parameters[node.parameters[0]];
  parameter.shape.at(0) = rows;
  parameter.size = rows * parameter.shape.at(1);
  node.plan.parameters.at(0).shape = parameter.shape;
  node.plan.row_table = table;
  std::size_t offset = 0;
  for (nn::ParameterInfo& each : plan.parameters) {
    each.offset = offset;
    offset += each.size;
  }
  plan.parameter_count = offset;
}

}  // namespace

std::vector<KeyedTable> plan_keyed_tables(nn::ModelPlan& plan, const std::filesystem::path& pass_dir) {
  std::vector<KeyedTable> tables;
  for (auto& [name, keys] : checkpoint::read_pass_keys(pass_dir)) {
    const std::size_t node = table_node(plan, name);
    if (node == plan.nodes.size()) {
      throw Error(ExitCode::kInputData, cat(pass_dir.string(), " holds keys of table ", name,
                                            ", which is no embedding_bag table of its model (model.txt)"));
    }
    if (keys.size() >= std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ExitCode::kInputData, cat(pass_dir.string(), ": table ", name, " holds ", keys.size(),
                                            " keyed rows; pstrain reads at most 2^32 - 2"));
    }
    tables.push_back({name, node, std::move(keys)});
  }
  std::sort(tables.begin(), tables.end(), [](const KeyedTable& a, const KeyedTable& b) { return a.node < b.node; });
  for (std::size_t t = 0; t < tables.size(); ++t) resize_table(plan, tables[t].node, tables[t].keys.size() + 1, t);
  return tables;
}

std::uint32_t keyed_row(std::span<const std::int64_t> keys, std::uint64_t id) {
  const auto key = static_cast<std::int64_t>(id);
  const auto found = std::lower_bound(keys.begin(), keys.end(), key);
  if (found == keys.end() || *found != key) return 0;
  return static_cast<std::uint32_t>(found - keys.begin() + 1);
}

KeyedLookups::KeyedLookups(const nn::ModelPlan& plan, const std::vector<KeyedTable>& tables)
    : tables_(tables), lookups_(tables.size()) {
  for (const KeyedTable& table : tables) fields_.push_back(plan.nodes.at(table.node).plan.categorical_fields);
}

void KeyedLookups::place(const core::JaggedIds& bags, nn::Model& model) {
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    std::vector<std::uint32_t>& rows = lookups_[t];
    rows.clear();
    for (const std::size_t field : fields_[t]) {
      for (std::size_t sample = 0; sample < bags.samples; ++sample) {
        for (const std::uint64_t id : bags.bag(field, sample)) rows.push_back(keyed_row(tables_[t].keys, id));
      }
    }
  }
  model.set_cached_lookups(&lookups_);
}

}  // namespace pstrain::inference
