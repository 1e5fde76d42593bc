#include "train/server_start.h"

#include <algorithm>

#include "checkpoint/pass_folder.h"
#include "checkpoint/table_rows.h"
#include "train/table_layout.h"

namespace pstrain::train {

namespace {

constexpr std::size_t kBlockFloats = std::size_t{1} << 20;

// The rows of the whole model's initialisation that this shard keeps, and its dense parameters (dense layout).
void draw_initial_values(const JobContext& job, std::vector<float>& dense, std::vector<std::vector<float>>& rows) {
  const auto shard = static_cast<std::uint64_t>(job.layout.shard_index);
  const auto shards = static_cast<std::uint64_t>(job.layout.pservers);
  std::vector<long> table_of(job.model.parameters.size(), -1);  // parameter -> row table, or -1
  std::vector<std::size_t> dense_offset(job.model.parameters.size(), 0);
  for (std::size_t i = 0, d = 0; i < job.model.parameters.size(); ++i) {
    for (std::size_t t = 0; t < job.tables.size(); ++t) {
      if (job.tables.table(t).name == job.model.parameters[i].name) table_of[i] = static_cast<long>(t);
    }
    if (table_of[i] >= 0) continue;
    dense_offset[i] = job.dense_parameters.at(d++).offset;
  }
  nn::visit_initial_parameters(job.model, job.config.seed, kBlockFloats,
                               [&](std::size_t i, std::size_t first, std::span<const float> block) {
                                 if (table_of[i] < 0) {
                                   std::copy(block.begin(), block.end(),
                                             dense.begin() + static_cast<std::ptrdiff_t>(dense_offset[i] + first));
                                   return;
                                 }
                                 const std::size_t width =
                                     job.tables.table(static_cast<std::size_t>(table_of[i])).width;
                                 std::vector<float>& mine = rows[static_cast<std::size_t>(table_of[i])];
                                 // Row by row (the block may start and end inside one): keep the rows r with r mod
                                 // shards == shard.
                                 for (std::size_t at = 0; at < block.size();) {
                                   const std::size_t element = first + at;
                                   const std::uint64_t row = element / width;
                                   const std::size_t column = element % width;
                                   const std::size_t run = std::min(width - column, block.size() - at);
                                   if (row % shards == shard) {
                                     std::copy_n(block.begin() + static_cast<std::ptrdiff_t>(at), run,
                                                 mine.begin() +
                                                     static_cast<std::ptrdiff_t>((row / shards) * width + column));
                                   }
                                   at += run;
                                 }
                               });
}

}  // namespace

ServerStart server_start(const JobContext& job) {
  const int shard = job.layout.shard_index;
  const int shards = job.layout.pservers;
  std::vector<float> dense;
  ServerStart start;
  for (std::size_t t = 0; t < job.tables.size(); ++t) {
    start.table_rows.emplace_back(job.tables.rows(t).rows_on(shard) * job.tables.table(t).width, 0.0f);
  }
  if (job.config.init_from) {
    dense = checkpoint::read_pass_parameters(*job.config.init_from, job.dense_parameters, job.dense_count);
    for (std::size_t t = 0; t < job.tables.size(); ++t) {
      const ps::TableSpec& table = job.tables.table(t);
      start.table_rows[t] =
          checkpoint::read_pass_table_rows(*job.config.init_from, {table.name, table.rows, table.width}, shard, shards);
    }
  } else {
    dense.assign(job.dense_count, 0.0f);
    draw_initial_values(job, dense, start.table_rows);
  }
  const ps::ShardPlan blocks = server_blocks(job);
  const ps::ModelPartition partition(blocks, job.tables);
  start.dense_slice.resize(blocks.shard_size(shard));
  partition.gather_dense(shard, dense, start.dense_slice);
  return start;
}

}  // namespace pstrain::train
