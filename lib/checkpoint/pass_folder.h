#pragma once
// Per-pass parameter folders, as in PaddlePaddle's cluster jobs: OUTPUT/pass-NNNNN/parameters.h5 with one
// dataset per parameter, named after its layer ("fc1.weight", shape as the model declares it), and a `done`
// file. The folder is assembled under a temporary name and renamed into place, so a pass-NNNNN folder that
// exists is always complete; `done` is written last inside it for readers that only look for the marker.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/file_manifest.h"
#include "nn/model.h"

namespace pstrain::checkpoint {

std::string pass_folder_name(int pass);  // "pass-00003"

// A tensor {rows, width} written a block of rows at a time from elsewhere: a row table the servers hold
// (ps/table_plan.h), which no trainer has whole. read(first, count, out) fills rows [first, first + count).
// A table keyed by the raw id (ps/keyed_rows.h) has `keys`: its row k + 1 is the row of keys[k] (ascending), its
// row 0 the default row that every other id reads; written beside it as keys/<name> (int64).
struct StreamedTensor {
  nn::ParameterInfo info;
  std::function<void(std::uint64_t first, std::uint64_t count, std::span<float> out)> read;
  std::optional<std::vector<std::int64_t>> keys = {};
};

inline constexpr const char* kKeysGroup = "keys";

// Throws Error(kOutput) when it cannot be written. An existing folder of that name is replaced only with
// `replace_existing` (a resumed run training that pass again), and then only once the new one is complete.
// `streamed` tensors are written beside `parameters`, named as they are; the files `beside` are copied into the
// folder under their own names (a language model's vocab.txt: the table's row r is the word on line r), and the
// `texts` (name, contents) are written into it (the model's description, pass_model.h).
void write_pass_folder(const std::filesystem::path& output_dir, int pass,
                       const std::vector<nn::ParameterInfo>& parameters, std::span<const float> flat,
                       bool replace_existing = false, const std::vector<StreamedTensor>& streamed = {},
                       const std::vector<std::filesystem::path>& beside = {},
                       const std::vector<std::pair<std::string, std::string>>& texts = {});

inline constexpr const char* kParametersFile = "parameters.h5";
// The folder's MANIFEST (core/file_manifest.h), written before `done`: parameters.h5 and the files beside it.
inline constexpr ManifestKind kPassManifest{"pstrain-pass", 1, "pass folder"};

// Throws Error(kInputData) naming the folder unless it is complete (`done`) and every file its MANIFEST lists
// has its size and checksum, so that a damaged copy is named as such before HDF5 reads it. Pass folders written
// before they carried a MANIFEST are taken on their `done` alone.
void verify_pass_folder(const std::filesystem::path& pass_dir);

// Throws Error(kInputData) naming `parameters_file` (a pass folder's parameters.h5) when it holds tables keyed by
// the raw id (StreamedTensor::keys): for the readers that do not take them (--init-from, evaluate with servers).
void refuse_keyed_tables(const std::filesystem::path& parameters_file);

// The keys of every table keyed by the raw id in a pass folder's parameters.h5 (keys/<name>), by table name; empty
// for a folder without keyed tables. Throws Error(kInputData) naming the file when a key list is not int64 [n] or
// not strictly ascending (the readers binary-search it).
std::map<std::string, std::vector<std::int64_t>> read_pass_keys(const std::filesystem::path& pass_dir);

// A table [rows, width] of a pass folder's parameters.h5, whole (a keyed table: its default row then its keys'
// rows). Throws Error(kInputData) naming the file when it is missing or not a 2-D float tensor.
struct PassTable {
  std::uint64_t rows = 0;
  std::size_t width = 0;
  std::vector<float> values;  // rows x width
};
PassTable read_pass_table(const std::filesystem::path& pass_dir, const std::string& name);

// Whether a reader of whole models takes tables keyed by the raw id: pstrain evaluate, predict and export plan such a
// table with its held rows (read_pass_keys); --init-from, whose table is the run's, does not.
enum class KeyedTables { kRefuse, kRead };

// Reads parameters.h5 of a complete, verified pass folder into the flat layout; every parameter must be present with
// the declared shape. Throws Error(kInputData) naming the folder and the mismatch, or a folder with keyed tables
// unless `keyed` is kRead (refuse_keyed_tables).
std::vector<float> read_pass_parameters(const std::filesystem::path& pass_dir,
                                        const std::vector<nn::ParameterInfo>& parameters, std::size_t flat_size,
                                        KeyedTables keyed = KeyedTables::kRefuse);

// The non-trainable state (batch-norm running statistics) that parameters.h5 holds beside the parameters, into
// `state`'s flat layout (empty for a model without state). Same errors as read_pass_parameters; the folder is
// expected verified already.
std::vector<float> read_pass_state(const std::filesystem::path& pass_dir, const std::vector<nn::ParameterInfo>& state,
                                   std::size_t flat_size);

// Names of pass-NNNNN folders (complete or not) in `output_dir`.
std::vector<std::filesystem::path> list_pass_folders(const std::filesystem::path& output_dir);

}  // namespace pstrain::checkpoint
