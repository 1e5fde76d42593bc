#pragma once
// Tables keyed by the raw id (ps/keyed_rows.h) in a checkpoint. Each server writes its keyed table to a row file
// of the name row files have (table_rows.h: rows-<table>-<shard>-of-<shards>.h5, listed in the MANIFEST with the
// others), holding only the rows it has given to ids, in id order:
//   /ids                  int64  [n]      ascending
//   /last_seen            int64  [n]      the step each id was last looked up at (eviction's recency)
//   /count                uint64 [n]      its sightings since admission
//   /rows                 float  [n x W]  its row
//   /optimizer/<state>    float  [n x W] or [n x 1]  the row optimizer's state of those rows
//   /sketch               uint16 [d x w]  the admission sketch's counters (admission_sketch.h)
//   /row                  int64  [n]      each id's row on its server, and
//   /index                int64  [B x 2]  the server's index (key_index.h): for a resume on as many servers
//   attributes table, rows (the table's cap), width, shard, shards, keyed = 1, admitted, evicted, refused,
//              sketch_sightings
// A reader of any number of servers takes the ids it owns (ps::key_owner) from every file; the caller re-deals them
// (ps::deal_entries keeps the most recently used within its cap).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/table_rows.h"

namespace pstrain::checkpoint {

struct KeyedRowsState {
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> last_seen;
  std::vector<std::uint64_t> counts;
  std::vector<float> rows;                                        // ids x width
  std::vector<std::pair<std::string, std::vector<float>>> state;  // ids x (width or 1)
  std::vector<std::uint16_t> sketch;
  std::vector<std::int64_t> held_rows;  // each id's row on its server
  std::vector<std::int64_t> index;      // the server's index, two words a bucket
  std::uint64_t admitted = 0;
  std::uint64_t evicted = 0;
  std::uint64_t refused = 0;
  std::uint64_t sketch_sightings = 0;  // since the sketch last halved its counters
};

// Writes shard `shard` of `shards`' state of `table` (its cap in `table.rows`) into `folder`. Throws
// Error(kOutput) on a failed write.
void write_keyed_table_rows(const std::filesystem::path& folder, const TableRowsSpec& table, int shard, int shards,
                            const KeyedRowsState& state);

// The servers `table` was written with in `folder` (its row files' count). Throws Error(kInputData) naming the
// problem: no row files, or row files of a table not keyed (written with --table-keys hashed).
int keyed_table_shards(const std::filesystem::path& folder, const TableRowsSpec& table);

// Shard `shard`'s file of `table`, its entries limited to the ids `keep` accepts (the sketch and counters whole).
// Throws Error(kInputData) naming the file and the mismatch (another table, width or cap; a state it lacks).
KeyedRowsState read_keyed_table_rows(const std::filesystem::path& folder, const TableRowsSpec& table, int shard,
                                     int shards, const std::vector<std::string>& state,
                                     const std::function<bool(std::int64_t)>& keep);

}  // namespace pstrain::checkpoint
