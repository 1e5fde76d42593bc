#pragma once
// A trained model read back from a pass folder (checkpoint/pass_folder.h), without any training set-up: its
// description and sample shape from the folder's model.txt and model.ini (checkpoint/pass_model.h), or, for a
// folder written before those existed, from flags; its parameters and non-trainable state from parameters.h5.
// What evaluate, predict and export start from.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/pass_model.h"
#include "data/shard.h"
#include "inference/keyed_tables.h"
#include "nn/model_plan.h"
#include "nn/presets.h"

namespace pstrain::inference {

// How to find the model of a pass folder that does not name it: --model-file FILE, or --model PRESET with the
// preset's options (the classes and vocabulary come from the data).
struct ModelChoice {
  std::optional<std::filesystem::path> model_file;
  std::optional<nn::PresetOptions> preset;
};

struct SavedModel {
  std::filesystem::path pass_dir;
  checkpoint::PassModelInfo info;  // from model.ini, or from the data's shape for an older folder
  nn::ModelPlan plan;
  std::vector<float> parameters;  // plan.parameters' flat layout
  std::vector<float> state;       // plan.state's flat layout
  // Tables keyed by the raw id (keyed_tables.h): planned with their held rows; their layers read the lookups
  // KeyedLookups places. Empty for a model of hashed tables.
  std::vector<KeyedTable> keyed;
};

// Error(kInputData) naming the folder unless it exists, is complete (`done`) and matches its MANIFEST.
void check_pass_folder(const std::filesystem::path& pass_dir);

// Reads a complete pass folder (its `done` and MANIFEST checked first). `data` is the shard the model will read,
// when there is one: an older folder takes its sample shape and classes from it. Throws Error(kInputData) naming
// the folder for a missing, incomplete or damaged folder or parameters of another shape, Error(kUsage) when an
// older folder's model is not named by `choice` or the description does not plan.
SavedModel load_saved_model(const std::filesystem::path& pass_dir, const ModelChoice& choice,
                            const data::ShardMeta* data);
// The same without reading parameters.h5 (`parameters` and `state` left empty): for ranks that read only a part of
// it (evaluation_ranks.h: a row table's rows, or everything but the row tables). Keyed tables are planned (and
// their keys read) already.
SavedModel load_saved_plan(const std::filesystem::path& pass_dir, const ModelChoice& choice,
                           const data::ShardMeta* data);

// Error(kInputData) naming both when samples of `data` are not what `model` reads (shape, classes, or ids of
// another vocabulary size).
void check_data_fits(const SavedModel& model, const data::ShardMeta& data, const std::string& data_name);

}  // namespace pstrain::inference
