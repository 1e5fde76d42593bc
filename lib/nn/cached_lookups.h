#pragma once
// Row tables held by the servers (ps/table_plan.h): a trainer's model holds, per table, a cache of the rows one
// batch looks up. For each table (in ps::TablePlan order; empty for a table of single ids, whose ids the trainer
// rewrites in the features instead), the cache row of every lookup of the batch, in the order embedding_bag walks
// its bags: field by field as the layer lists them, sample by sample, id by id. ps::TableClient fills it,
// nn::Model::set_cached_lookups hands it to the layers (StepContext::cached_lookups).
#include <cstdint>
#include <vector>

namespace pstrain::nn {

using CachedLookups = std::vector<std::vector<std::uint32_t>>;

}  // namespace pstrain::nn
