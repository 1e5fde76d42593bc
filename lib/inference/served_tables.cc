#include "inference/served_tables.h"

#include <chrono>

#include "checkpoint/table_rows.h"
#include "comm/mpi_check.h"
#include "comm/window.h"
#include "core/error.h"
#include "core/poll_pause.h"
#include "ps/model_tables.h"

namespace pstrain::inference {

ps::TablePlan plan_served_tables(const nn::ModelPlan& model, int servers, std::size_t batch,
                                 std::span<const std::uint64_t> longest_bags) {
  ps::TablePlan tables = ps::plan_model_tables(model, servers, batch, longest_bags, ps::ComputedIdTables::kRefuse,
                                               "evaluate without --num-pservers");
  if (tables.empty()) {
    throw Error(ExitCode::kUsage, cat("--num-pservers ", servers,
                                      ": the model has no row table (embedding table) for servers to hold; "
                                      "evaluate it without --num-pservers (every rank then scores a part of "
                                      "the data)"));
  }
  return tables;
}

EvaluatorModel evaluator_model(const nn::ModelPlan& model, const ps::TablePlan& tables, std::size_t batch) {
  EvaluatorModel result;
  result.dense = ps::dense_layout(model, tables);
  for (const nn::ParameterInfo& parameter : result.dense) result.dense_count += parameter.size;
  result.caches = ps::row_caches(tables, result.dense_count, batch);
  result.plan = ps::cut_model_plan(model, tables, batch);
  return result;
}

ServedTables::ServedTables(MPI_Comm world, const comm::WorldLayout& layout, const ps::TablePlan& tables,
                           std::vector<ps::RowCache> caches)
    : tables_(tables), layout_(layout), windows_(world, layout, tables) {
  if (!layout.is_server()) client_ = std::make_unique<ps::TableClient>(windows_, tables, std::move(caches), layout);
}

void ServedTables::load_rows(const std::filesystem::path& pass_dir, int shard) {
  for (std::size_t t = 0; t < tables_.size(); ++t) {
    const ps::TableSpec& table = tables_.table(t);
    // The window's memory is touched only inside an epoch on it (ps/windows.h).
    comm::WindowLock lock(windows_.rows(), layout_.world_rank, comm::WindowLock::Mode::kExclusive);
    checkpoint::read_pass_table_rows(pass_dir, {table.name, table.rows, table.width}, shard, tables_.rows(t).shards(),
                                     windows_.local_rows(t));
    lock.unlock();
  }
}

BeforeBatch ServedTables::fetch_rows(nn::Model& model) {
  PSTRAIN_ASSERT(client_ != nullptr, "a server has no rows to fetch");
  const std::span<float> parameters = model.host_parameters();
  PSTRAIN_ASSERT(!parameters.empty(), "the CPU backend keeps the parameters in host memory");
  return [this, parameters, &model](std::span<float> features, const core::JaggedIds* categorical, std::size_t count) {
    client_->fetch_for_evaluation({features, categorical, count}, parameters);
    model.set_cached_lookups(&client_->cached_lookups());
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
