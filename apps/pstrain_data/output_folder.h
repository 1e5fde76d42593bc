#pragma once
// Writing a converted data folder, the same way for every dataset: train-NNNNN.h5, valid.h5 where there is a
// validation split, test.h5, files the dataset adds (text's vocab.txt), and the MANIFEST last (data/shard.h).
// A conversion never overwrites or mixes with an earlier one: an --output that holds anything pstrain-data writes
// is refused, and the files are staged (staging_folder.h) so that a failed conversion leaves none of them.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "data/shard.h"

namespace pstrain_data {

// Error(kUsage) naming the folder and what it holds when `output` holds files of a conversion
// (data::conversion_files_in); nothing for a missing, empty or unrelated folder. Called before any input is read,
// and again before writing.
void refuse_converted_folder(const std::filesystem::path& output);

// A file a dataset writes beside the shards: its name and contents.
using ExtraFile = std::pair<std::string, std::string>;

// Writes the folder (creating `output` when missing; Error(kOutput) when it cannot), or nothing at all.
void write_shard_folder(const std::filesystem::path& output, const std::vector<pstrain::data::Samples>& train_shards,
                        const std::optional<pstrain::data::Samples>& valid, const pstrain::data::Samples& test,
                        const std::vector<ExtraFile>& extra_files = {});

}  // namespace pstrain_data

namespace pstrain_data {

// pstrain-data manifest: writes FOLDER/MANIFEST for shards written by another program (h5py: data/README.md), then
// reads every shard back through the trainer's checks and compares their sample shapes and class counts with
// test.h5's; on any failure the new MANIFEST is removed again and the error names the shard.
void write_manifest_of_folder(const std::filesystem::path& folder);

}  // namespace pstrain_data
