#pragma once
// Tables keyed by the raw id (--table-keys exact) in a saved model. The pass folder holds such a table as
// [n + 1, W] (checkpoint/pass_folder.h StreamedTensor::keys): row 0 the default row that every id without a row
// of its own reads, row k + 1 the row of keys[k] (keys ascending). The model file still says rows=CAP (the
// servers' cap), so a saved model is planned anew with the held rows (n + 1), and its embedding_bag layers read
// their rows from cached lookups (nn/cached_lookups.h), as a trainer's do, placed here by a binary search of each
// id in the keys instead of the hash of nn/id_hash.h: the rows the trainer's key index gave the same ids.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/jagged_ids.h"
#include "nn/cached_lookups.h"
#include "nn/model.h"
#include "nn/model_plan.h"

namespace pstrain::inference {

struct KeyedTable {
  std::string name;                // the parameter ("c0_12.weight")
  std::size_t node = 0;            // its embedding_bag in ModelPlan::nodes
  std::vector<std::int64_t> keys;  // strictly ascending; row k + 1 is keys[k]'s
};

// Reads the keys of `pass_dir`'s keyed tables and replans `plan` for them: each keyed table gets keys + 1 rows
// (the parameters after it move), and its layer reads cached lookups (LayerPlan::row_table: the table's index in
// the result). Returns them in plan order; none for a folder without keyed tables (the plan is then untouched).
// Throws Error(kInputData) naming the folder when a key list names no table of bags of the model, or is too long
// for a row the cached lookups can hold (2^32 - 1).
std::vector<KeyedTable> plan_keyed_tables(nn::ModelPlan& plan, const std::filesystem::path& pass_dir);

// The table row of `id`: 1 + k where keys[k] == id (the id's 64 bits read as int64, as the servers key them),
// else 0, the default row (an id never admitted, or evicted).
std::uint32_t keyed_row(std::span<const std::int64_t> keys, std::uint64_t id);

// The keyed tables' lookups of one batch, in the order embedding_bag walks its bags (field by field as the layer
// lists them, sample by sample, id by id), handed to the model before its forward pass.
class KeyedLookups {
 public:
  KeyedLookups(const nn::ModelPlan& plan, const std::vector<KeyedTable>& tables);
  // Places every lookup of `bags` (the batch's categorical fields) and tells `model` where they are; the model
  // reads them until the next call.
  void place(const core::JaggedIds& bags, nn::Model& model);

 private:
  const std::vector<KeyedTable>& tables_;
  std::vector<std::vector<std::size_t>> fields_;  // per table, the fields its layer reads
  nn::CachedLookups lookups_;
};

}  // namespace pstrain::inference
