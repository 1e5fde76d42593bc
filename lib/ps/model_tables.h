#pragma once
// A model's row tables (embedding tables) held by parameter servers row by row (ps/table_plan.h), and the model a
// rank that reads them builds around them: the layout questions a trainer (run_common/table_layout.h) and an evaluator
// with servers (inference/served_tables.h) answer the same way, from the model's plan alone.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nn/model_plan.h"
#include "ps/table_client.h"
#include "ps/table_plan.h"

namespace pstrain::ps {

// What to do with a table that looks up ids another layer computes (only ids read straight from the data can be
// fetched before the forward pass).
enum class ComputedIdTables {
  kStayDense,  // leave it out of the plan: it stays a dense parameter (--table-exchange auto)
  kRefuse,     // Error(kUsage): the user asked for every table by rows
};

// The tables of `model` that `servers` shards hold by rows, for batches of at most `batch` samples; empty when
// the model has none. `longest_bags`: per categorical field of the data, its longest bag (data::CategoricalMeta
// over every shard), which bounds the rows a batch of a table of bags (embedding_bag) looks up; empty for data
// without fields. Throws Error(kUsage), ending in `remedy` (the flag to change), for a table refused as above, a
// table of bags of a field `longest_bags` does not know, and when a layer other than a table reads the data's ids
// (a rank rewrites them as places in its row caches; a table of bags reads the fields, which no rank rewrites).
TablePlan plan_model_tables(const nn::ModelPlan& model, int servers, std::size_t batch,
                            std::span<const std::uint64_t> longest_bags, ComputedIdTables rule,
                            std::string_view remedy);

// Per parameter of the model, whether `tables` holds it by rows.
std::vector<bool> held_by_rows(const nn::ModelPlan& model, const TablePlan& tables);

// The model's parameters less the tables `tables` holds by rows, packed in order (offsets recomputed): the layout
// of the model state that a checkpoint's model.h5 holds. Without row tables, the model's own layout.
std::vector<nn::ParameterInfo> dense_layout(const nn::ModelPlan& model, const TablePlan& tables);

// Where a rank keeps each row table's rows of one batch: after the `dense_count` dense parameters, one cache per
// table, in TablePlan order, of the most distinct ids a batch of `max_batch` samples can look up.
std::vector<RowCache> row_caches(const TablePlan& tables, std::size_t dense_count, std::size_t max_batch);

// The model a rank that fetches rows builds: `model` with each row table cut to its cache (row_caches), the other
// parameters first, packed as in the dense layout, then the caches. Its flat vector thus starts with exactly what
// the servers' dense blocks cut, and never holds a table. Without row tables, `model` itself.
nn::ModelPlan cut_model_plan(const nn::ModelPlan& model, const TablePlan& tables, std::size_t max_batch);

}  // namespace pstrain::ps
