#pragma once
// Reading back ctr_fields.tsv (data/ctr_file_names.h; written by pstrain-data criteo | movielens | synthetic-ctr,
// ctr_folder_writer.h): each categorical field's number of distinct ids, which the dlrm and deepfm presets size
// their tables from.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pstrain::data::ctr {

// The distinct ids of each of `fields` (by name, in that order) as the data folder `data_dir` records them.
// Throws Error(kInputData) naming the file when it is missing, malformed or lacks a field.
std::vector<std::uint64_t> read_distinct_ids(const std::filesystem::path& data_dir,
                                             const std::vector<std::string>& fields);

}  // namespace pstrain::data::ctr
