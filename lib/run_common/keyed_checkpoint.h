#pragma once
// Keyed tables (ps/keyed_rows.h) between a server's memory and a checkpoint's row files
// (checkpoint/keyed_table_rows.h): what a server writes, and what it takes back on a resume with any number of
// servers, its ids re-dealt by their hash (ps::key_owner) and kept within its cap by recency (ps::deal_entries).
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/keyed_table_rows.h"
#include "ps/table_plan.h"
#include "ps/table_shard.h"

namespace pstrain::run_common {

checkpoint::KeyedRowsState keyed_rows_to_save(const ps::KeyedShardState& state);

// Server `shard` of `shards`' state of keyed table `table` from the checkpoint in `folder`: written with the same
// number of servers, its own file as it was; else the ids it owns from every file, the most recently used within
// its cap, the sketches added (a count-min sketch that never undercounts stays so), the counters on server 0.
// Throws Error(kInputData) as the reader does.
ps::KeyedShardState keyed_rows_to_resume(const std::filesystem::path& folder, const ps::TableSpec& table, int shard,
                                         int shards, const std::vector<std::string>& state_names);

}  // namespace pstrain::run_common
