#include "server/server_start.h"

#include <algorithm>
#include <chrono>

#include "checkpoint/pass_folder.h"
#include "checkpoint/table_rows.h"
#include "core/log.h"
#include "nn/model_plan.h"

namespace pstrain::server {

namespace {

constexpr std::size_t kBlockFloats = std::size_t{1} << 20;

bool is_row_table(const run_common::JobContext& job, std::size_t parameter) {
  for (std::size_t t = 0; t < job.tables.size(); ++t) {
    if (job.tables.table(t).name == job.model.parameters[parameter].name) return true;
  }
  return false;
}

checkpoint::TableRowsSpec spec_of(const ps::TableSpec& table) {
  return {table.name, table.rows, table.width};
}

// The dense parameters' initial values (dense layout), drawn alone: the row tables, which come after them or
// between them, cost nothing to pass over (nn::visit_initial_parameters).
void draw_dense_values(const run_common::JobContext& job, std::vector<float>& dense) {
  std::vector<std::size_t> dense_offset(job.model.parameters.size(), 0);
  for (std::size_t i = 0, d = 0; i < job.model.parameters.size(); ++i) {
    if (!is_row_table(job, i)) dense_offset[i] = job.dense_parameters.at(d++).offset;
  }
  nn::visit_initial_parameters(
      job.model, job.config.seed, kBlockFloats,
      [&](std::size_t i, std::size_t first, std::span<const float> block) {
        std::copy(block.begin(), block.end(), dense.begin() + static_cast<std::ptrdiff_t>(dense_offset[i] + first));
      },
      [&](std::size_t i) { return !is_row_table(job, i); });
}

// This shard's rows of table `t` (rows r with r mod shards == shard, in local order), drawn for these rows alone:
// the time and the numbers drawn grow with the shard's share of the table, not with the table.
void draw_table_rows(const run_common::JobContext& job, std::size_t t, std::span<float> rows) {
  const ps::TableSpec& table = job.tables.table(t);
  std::size_t parameter = 0;
  while (job.model.parameters.at(parameter).name != table.name) ++parameter;
  const auto started = std::chrono::steady_clock::now();
  nn::initial_rows(job.model, job.config.seed, parameter, static_cast<std::uint64_t>(job.layout.shard_index),
                   static_cast<std::uint64_t>(job.layout.pservers), rows);
  log_info("initial rows of ", table.name, " drawn in ",
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), " s (",
           rows.size() / table.width, " rows)");
}

}  // namespace

void check_server_start(const run_common::JobContext& job) {
  if (!job.config.init_from) return;
  checkpoint::read_pass_parameters(*job.config.init_from, job.dense_parameters, job.dense_count);
  for (std::size_t t = 0; t < job.tables.size(); ++t) {
    checkpoint::check_pass_table(*job.config.init_from, spec_of(job.tables.table(t)));
  }
}

std::vector<float> fill_server_start(const run_common::JobContext& job, const ps::ModelPartition& partition,
                                     const std::vector<std::unique_ptr<ps::TableShard>>& tables) {
  const int shard = job.layout.shard_index;
  std::vector<float> dense(job.dense_count, 0.0f);
  if (job.config.init_from) {
    dense = checkpoint::read_pass_parameters(*job.config.init_from, job.dense_parameters, job.dense_count);
    for (std::size_t t = 0; t < tables.size(); ++t) {
      tables[t]->fill_rows([&](std::span<float> rows) {
        checkpoint::read_pass_table_rows(*job.config.init_from, spec_of(job.tables.table(t)), shard,
                                         job.layout.pservers, rows);
      });
    }
  } else {
    draw_dense_values(job, dense);
    // Each table into its own window (one window locked at a time).
    for (std::size_t t = 0; t < tables.size(); ++t) {
      if (job.tables.table(t).exact_keys()) continue;  // holds no row yet: its rows get values as ids are admitted
      tables[t]->fill_rows([&](std::span<float> rows) { draw_table_rows(job, t, rows); });
    }
  }
  std::vector<float> slice(partition.blocks().shard_size(shard));
  partition.gather_dense(shard, dense, slice);
  return slice;
}

}  // namespace pstrain::server
