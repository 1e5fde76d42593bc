#pragma once
// Row tables in a checkpoint. A table the servers hold by rows (ps/table_plan.h: row r on shard r mod P) is not
// gathered anywhere: each server shard writes its own rows, and its optimizer's state for them, to a file of its
// own in the checkpoint folder, which the MANIFEST lists with the other files:
//   rows-<table>-<shard, 5 digits>-of-<shards, 5 digits>.h5
//     /rows                 float [R_s x W]  local row l is the table's row l * shards + shard
//     /optimizer/<state>    float [R_s x W]  the same rows of each optimizer state vector ("velocity", "m", ...),
//                           or [R_s x 1] for a state per row (row-wise Adagrad's "row_sum"; a shard without rows
//                           writes it as [0 x W])
//     attributes table, rows (the table's), width, shard, shards
// model.h5 then holds every other parameter. A reader asks for the rows of one shard of any number of shards
// (elastic resume re-deals them; 1 of 1 is the whole table), from these files or, for a checkpoint written with
// the table whole, from model.h5's full tensors; rows are streamed in blocks, so no rank holds more than its share.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pstrain::checkpoint {

struct TableRowsSpec {
  std::string name;        // the parameter ("embed.weight")
  std::uint64_t rows = 0;  // the whole table's
  std::size_t width = 0;   // floats per row
};

// Rows of the table that shard `shard` of `shards` holds: those r with r mod shards == shard.
std::uint64_t rows_of_shard(std::uint64_t rows, int shard, int shards);

std::string table_rows_file(const std::string& table, int shard, int shards);

// Writes shard `shard` of `shards`' rows (`rows`, local order) and each optimizer state vector's rows into
// `folder`. Throws H5::Exception on a failed write.
void write_table_rows(const std::filesystem::path& folder, const TableRowsSpec& table, int shard, int shards,
                      std::span<const float> rows,
                      const std::vector<std::pair<std::string, std::span<const float>>>& state);

// Whether `name` is a row file's name.
bool is_table_rows_file(const std::string& name);

// The row files in a checkpoint folder, by name.
std::vector<std::string> list_table_row_files(const std::filesystem::path& folder);

// Whether the checkpoint in `folder` holds `table` by rows (its row files) rather than whole in model.h5.
bool holds_table_rows(const std::filesystem::path& folder, const std::string& table);

struct TableRows {
  std::vector<float> rows;                // local order of shard `shard` of `shards`
  std::vector<std::vector<float>> state;  // the requested optimizer vectors, in the order asked
};

// The optimizer states the row files of `table` in `folder` hold, by name (none when it was written whole).
std::vector<std::string> table_row_states(const std::filesystem::path& folder, const TableRowsSpec& table);

// Reads the rows shard `shard` of `shards` holds, of the parameters and of each optimizer state in `state` (states
// per element, as wide as the table), whatever the number of shards the checkpoint was written with. Throws
// Error(kInputData) naming the file and the mismatch (a row file missing, another table size or width, a state it
// lacks).
TableRows read_table_rows(const std::filesystem::path& folder, const TableRowsSpec& table, int shard, int shards,
                          const std::vector<std::string>& state);
// The same into memory of the caller's (the server's window and optimizer state, no copy): `rows` and each
// named state vector sized as the shard's rows, a state per element or per row.
void read_table_rows(const std::filesystem::path& folder, const TableRowsSpec& table, int shard, int shards,
                     std::span<float> rows, const std::vector<std::pair<std::string, std::span<float>>>& state);

// The rows shard `shard` of `shards` holds of a table written whole in a pass folder's parameters.h5 (the
// servers' share of --init-from). Throws Error(kInputData) naming the file and the mismatch.
void read_pass_table_rows(const std::filesystem::path& pass_dir, const TableRowsSpec& table, int shard, int shards,
                          std::span<float> rows);
// Checks that the pass folder holds `table` whole, of its shape, without reading it.
void check_pass_table(const std::filesystem::path& pass_dir, const TableRowsSpec& table);

}  // namespace pstrain::checkpoint
