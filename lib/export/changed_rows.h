#pragma once
// pstrain export --changed-rows FILE --since OLD NEW: what a serving system that takes updates (Monolith's online
// sync) needs to go from pass folder OLD's tables keyed by the raw id to NEW's (the same run, a later pass), computed
// from the two folders alone. Per keyed table:
//   ids held in NEW whose row is new (not held in OLD) or changed (any bit), with their rows in NEW;
//   ids held in OLD and not in NEW (evicted since): they read the default row now;
//   NEW's default row (row 0; zeros in every pass folder pstrain writes).
// Applying them to OLD's table (id -> row) gives NEW's exactly. The other parameters (dense layers, hashed tables)
// are not in it: they change wholly every step and come from a full export. The file (HDF5):
//   attributes  format = "pstrain-changed-rows", version = 1, since = OLD, pass = NEW (the folders as given)
//   /tables/<table>/changed_ids   int64 [c]      strictly ascending
//   /tables/<table>/changed_rows  float [c, W]   row i is changed_ids[i]'s
//   /tables/<table>/removed_ids   int64 [r]      strictly ascending
//   /tables/<table>/default_row   float [W]
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace pstrain::exporting {

inline constexpr const char* kChangedRowsFormat = "pstrain-changed-rows";
inline constexpr int kChangedRowsVersion = 1;

struct TableDelta {
  std::string name;  // the table ("c0_12.weight")
  std::size_t width = 0;
  std::vector<std::int64_t> changed_ids;
  std::vector<float> changed_rows;  // changed_ids x width
  std::vector<std::int64_t> removed_ids;
  std::vector<float> default_row;  // width
};

// A keyed table as a pass folder holds it: `rows` is (keys + 1) x width, the default row first.
struct KeyedTableRows {
  std::span<const std::int64_t> keys;  // strictly ascending
  std::span<const float> rows;
};

// The change from `before` to `after` (tables of rows `width` floats wide), by one merge of the two key lists.
TableDelta table_delta(const std::string& name, std::size_t width, const KeyedTableRows& before,
                       const KeyedTableRows& after);

// Every keyed table's change from pass folder `since` to `pass` (both checked complete). Throws Error(kInputData)
// naming the folders when they are not of one model (model.txt differs, a keyed table one lacks or of another
// width), Error(kUsage) when `pass` holds no keyed table.
std::vector<TableDelta> changed_rows(const std::filesystem::path& since, const std::filesystem::path& pass);

// Writes them as the file above, under a temporary name renamed into place. Error(kOutput) naming the path when it
// exists already (pstrain never replaces a file) or cannot be written.
void write_changed_rows(const std::filesystem::path& target, const std::vector<TableDelta>& deltas,
                        const std::filesystem::path& since, const std::filesystem::path& pass);

}  // namespace pstrain::exporting
