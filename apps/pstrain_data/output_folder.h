#pragma once
// Writing a converted data folder, the same way for every dataset: train-NNNNN.h5, valid.h5 where there is a
// validation split (a stale one removed where there is none), test.h5, stale train shards of an earlier conversion
// with more shards removed, and the MANIFEST last (data/shard.h).
#include <filesystem>
#include <optional>
#include <vector>

#include "data/shard.h"

namespace pstrain_data {

// Creates `output` when missing (Error(kOutput) when it cannot). Files the caller writes beside the shards (text's
// vocab.txt) must be there before this call, so that the MANIFEST lists them.
void write_shard_folder(const std::filesystem::path& output, const std::vector<pstrain::data::Samples>& train_shards,
                        const std::optional<pstrain::data::Samples>& valid, const pstrain::data::Samples& test);

// Creates `output` when missing; Error(kOutput) when it cannot.
void create_output_folder(const std::filesystem::path& output);

}  // namespace pstrain_data

namespace pstrain_data {

// pstrain-data manifest: writes FOLDER/MANIFEST for shards written by another program (h5py: data/README.md), then
// reads every shard back through the trainer's checks and compares their sample shapes and class counts with
// test.h5's; on any failure the new MANIFEST is removed again and the error names the shard.
void write_manifest_of_folder(const std::filesystem::path& folder);

}  // namespace pstrain_data
