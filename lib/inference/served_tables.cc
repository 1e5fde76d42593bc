#include "inference/served_tables.h"

#include <algorithm>
#include <chrono>

#include "checkpoint/table_rows.h"
#include "comm/mpi_check.h"
#include "comm/window.h"
#include "core/error.h"
#include "core/poll_pause.h"

namespace pstrain::inference {

namespace {

bool reads_data(const nn::PlannedNode& node) {
  return std::find(node.inputs.begin(), node.inputs.end(), nn::ModelPlan::kDataInput) != node.inputs.end();
}

// Only tables may read the data's ids: an evaluator rewrites them as places in its row caches.
void check_only_tables_read_ids(const nn::ModelPlan& model) {
  for (const nn::PlannedNode& node : model.nodes) {
    const bool is_table = node.parameters.size() == 1 && model.parameters[node.parameters[0]].row_table;
    if (reads_data(node) && !is_table) {
      throw Error(ExitCode::kUsage, cat("--num-pservers: layer ", node.spec.name,
                                        " reads the data's ids besides the row tables, so the servers cannot serve "
                                        "the tables by rows; evaluate without --num-pservers"));
    }
  }
}

}  // namespace

ps::TablePlan plan_served_tables(const nn::ModelPlan& model, int servers, std::size_t batch) {
  std::vector<ps::TableSpec> tables;
  for (const nn::PlannedNode& node : model.nodes) {
    for (const std::size_t index : node.parameters) {
      const nn::ParameterInfo& parameter = model.parameters[index];
      if (!parameter.row_table) continue;
      if (node.inputs.size() != 1 || node.inputs[0] != nn::ModelPlan::kDataInput) {
        throw Error(ExitCode::kUsage, cat("--num-pservers: table ", parameter.name, " looks up ids that layer ",
                                          model.nodes[static_cast<std::size_t>(node.inputs.at(0))].spec.name,
                                          " computes, which the servers cannot serve by rows; evaluate without "
                                          "--num-pservers"));
      }
      tables.push_back({parameter.name, parameter.offset, parameter.shape.at(0), parameter.shape.at(1),
                        nn::element_count(node.input_shapes[0])});
    }
  }
  if (tables.empty()) {
    throw Error(ExitCode::kUsage, cat("--num-pservers ", servers,
                                      ": the model has no row table (embedding table) for servers to hold; "
                                      "evaluate it without --num-pservers (every rank then scores a part of "
                                      "the data)"));
  }
  check_only_tables_read_ids(model);
  return {std::move(tables), servers, batch};
}

EvaluatorModel evaluator_model(const nn::ModelPlan& model, const ps::TablePlan& tables, std::size_t batch) {
  EvaluatorModel result;
  result.plan = model;
  std::vector<std::size_t> table_of(model.parameters.size(), tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    for (std::size_t i = 0; i < model.parameters.size(); ++i) {
      if (model.parameters[i].name == tables.table(t).name) table_of[i] = t;
    }
  }
  for (std::size_t i = 0; i < model.parameters.size(); ++i) {
    if (table_of[i] != tables.size()) continue;
    result.dense.push_back(model.parameters[i]);
    result.dense.back().offset = result.dense_count;
    result.plan.parameters[i].offset = result.dense_count;
    result.dense_count += model.parameters[i].size;
  }
  std::size_t offset = result.dense_count;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const ps::TableSpec& table = tables.table(t);
    const auto rows = static_cast<std::size_t>(
        std::min<std::uint64_t>(table.rows, static_cast<std::uint64_t>(batch) * table.ids_per_sample));
    result.caches.push_back({offset, rows});
    offset += rows * table.width;
  }
  for (std::size_t i = 0; i < model.parameters.size(); ++i) {
    if (table_of[i] == tables.size()) continue;
    nn::ParameterInfo& parameter = result.plan.parameters[i];
    const ps::RowCache& cache = result.caches[table_of[i]];
    parameter.shape.at(0) = cache.rows;
    parameter.size = cache.rows * parameter.shape.at(1);
    parameter.offset = cache.offset;
  }
  // The layers read their tables' shapes from their own plans.
  for (nn::PlannedNode& node : result.plan.nodes) {
    for (std::size_t i = 0; i < node.parameters.size(); ++i) {
      node.plan.parameters.at(i).shape = result.plan.parameters[node.parameters[i]].shape;
    }
  }
  result.plan.parameter_count = offset;
  return result;
}

ServedTables::ServedTables(MPI_Comm world, const comm::WorldLayout& layout, const ps::TablePlan& tables,
                           std::vector<ps::RowCache> caches)
    : tables_(tables), layout_(layout) {
  windows_.reserve(tables.size());  // the client keeps a reference to the vector
  for (std::size_t t = 0; t < tables.size(); ++t) windows_.emplace_back(world, layout, tables, t);
  if (!layout.is_server()) client_ = std::make_unique<ps::TableClient>(windows_, tables, std::move(caches), layout);
}

void ServedTables::load_rows(const std::filesystem::path& pass_dir, int shard) {
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    const ps::TableSpec& table = tables_.table(t);
    // The window's memory is touched only inside an epoch on it (ps/windows.h).
    comm::WindowLock lock(windows_[t].rows.handle(), layout_.world_rank, comm::WindowLock::Mode::kExclusive);
    checkpoint::read_pass_table_rows(pass_dir, {table.name, table.rows, table.width}, shard, tables_.rows(t).shards(),
                                     windows_[t].rows.local());
    lock.unlock();
  }
}

BeforeBatch ServedTables::fetch_rows(std::span<float> parameters) {
  PSTRAIN_ASSERT(client_ != nullptr, "a server has no rows to fetch");
  return [this, parameters](std::span<float> features, std::size_t count) {
    client_->fetch_for_evaluation(features, count, parameters);
  };
}

EvaluationDone::EvaluationDone(MPI_Comm world) {
  MPI_CHECK(MPI_Ibarrier(world, &request_));
}

void EvaluationDone::wait_serving() {
  for (int done = 0;;) {
    MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
    if (done != 0) return;
    pause_between_polls(std::chrono::microseconds(0));
  }
}

void EvaluationDone::wait_evaluated() {
  MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
}

}  // namespace pstrain::inference
