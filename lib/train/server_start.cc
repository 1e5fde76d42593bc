#include "train/server_start.h"

#include <algorithm>

#include "checkpoint/pass_folder.h"
#include "checkpoint/table_rows.h"

namespace pstrain::train {

namespace {

constexpr std::size_t kBlockFloats = std::size_t{1} << 20;

checkpoint::TableRowsSpec spec_of(const ps::TableSpec& table) {
  return {table.name, table.rows, table.width};
}

// One pass over the whole model's initialisation, keeping the dense parameters (`dense`, dense layout; null to
// skip them) and this shard's rows of table `only` (`rows`, local order).
void draw_initial_values(const JobContext& job, std::vector<float>* dense, std::size_t only, std::span<float> rows) {
  const auto shard = static_cast<std::uint64_t>(job.layout.shard_index);
  const auto shards = static_cast<std::uint64_t>(job.layout.pservers);
  std::vector<long> table_of(job.model.parameters.size(), -1);  // parameter -> row table, or -1
  std::vector<std::size_t> dense_offset(job.model.parameters.size(), 0);
  for (std::size_t i = 0, d = 0; i < job.model.parameters.size(); ++i) {
    for (std::size_t t = 0; t < job.tables.size(); ++t) {
      if (job.tables.table(t).name == job.model.parameters[i].name) table_of[i] = static_cast<long>(t);
    }
    if (table_of[i] < 0) dense_offset[i] = job.dense_parameters.at(d++).offset;
  }
  const std::size_t width = job.tables.empty() ? 1 : job.tables.table(only).width;
  nn::visit_initial_parameters(job.model, job.config.seed, kBlockFloats,
                               [&](std::size_t i, std::size_t first, std::span<const float> block) {
                                 if (table_of[i] < 0) {
                                   if (dense != nullptr) {
                                     std::copy(block.begin(), block.end(),
                                               dense->begin() + static_cast<std::ptrdiff_t>(dense_offset[i] + first));
                                   }
                                   return;
                                 }
                                 if (static_cast<std::size_t>(table_of[i]) != only) return;
                                 // Row by row (the block may start and end inside one): keep the rows r with r mod
                                 // shards == shard.
                                 for (std::size_t at = 0; at < block.size();) {
                                   const std::size_t element = first + at;
                                   const std::uint64_t row = element / width;
                                   const std::size_t column = element % width;
                                   const std::size_t run = std::min(width - column, block.size() - at);
                                   if (row % shards == shard) {
                                     std::copy_n(block.begin() + static_cast<std::ptrdiff_t>(at), run,
                                                 rows.begin() +
                                                     static_cast<std::ptrdiff_t>((row / shards) * width + column));
                                   }
                                   at += run;
                                 }
                               });
}

}  // namespace

void check_server_start(const JobContext& job) {
  if (!job.config.init_from) return;
  checkpoint::read_pass_parameters(*job.config.init_from, job.dense_parameters, job.dense_count);
  for (std::size_t t = 0; t < job.tables.size(); ++t) {
    checkpoint::check_pass_table(*job.config.init_from, spec_of(job.tables.table(t)));
  }
}

std::vector<float> fill_server_start(const JobContext& job, const ps::ModelPartition& partition,
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
  } else if (tables.empty()) {
    draw_initial_values(job, &dense, 0, {});
  } else {
    // A pass over the whole initialisation per table, each writing into that table's window alone (one window
    // locked at a time); the first keeps the dense parameters too.
    for (std::size_t t = 0; t < tables.size(); ++t) {
      tables[t]->fill_rows(
          [&](std::span<float> rows) { draw_initial_values(job, t == 0 ? &dense : nullptr, t, rows); });
    }
  }
  std::vector<float> slice(partition.blocks().shard_size(shard));
  partition.gather_dense(shard, dense, slice);
  return slice;
}

}  // namespace pstrain::train
