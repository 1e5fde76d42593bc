#pragma once
// Resumable checkpoints: OUTPUT/checkpoints/ckpt-<global step, 10 digits>/ holding
//   model.h5     /parameters/<name> and /optimizer/<state>/<name> as full tensors (shapes as the model declares
//                them), /state/<name> for models with non-trainable state (batch-norm running statistics), root
//                attributes format_version, optimizer, optimizer_steps
//   training.h5  root attributes pass, step_in_pass, global_step, seed; /consumed/train-NNNNN (uint8, one flag per
//                sample of that shard: already trained on in the pass in progress)
//   config.ini   the configuration of the run that wrote it
//   rows-*.h5    the tables the servers hold by rows, a file per table and shard (table_rows.h); model.h5 then
//                lacks them
//   trainer-*.h5 --mode geo with a stateful optimizer: each trainer's own optimizer state (trainer_states.h)
//   MANIFEST     written last (see manifest.h)
// Nothing in it depends on the number of servers or trainers: full tensors and per-sample flags can be cut up
// for any layout, and row files are re-dealt to any number of shards as they are read. All randomness derives
// from (seed, pass, trainer), so the seed is the whole RNG state.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/manifest.h"
#include "nn/model.h"

namespace pstrain::checkpoint {

struct ModelState {
  std::vector<float> parameters;  // flat, the model's layout
  std::string optimizer;          // "sgd" | "momentum" | "adam"
  std::uint64_t optimizer_steps = 0;
  std::vector<std::pair<std::string, std::vector<float>>> optimizer_state;  // flat, same layout
  std::vector<nn::ParameterInfo> state_layout;  // the model's non-trainable state (empty for most models)
  std::vector<float> state;                     // flat, state_layout
};

struct TrainingState {
  std::int64_t pass = 0;          // the pass in progress (== passes when training is complete)
  std::int64_t step_in_pass = 0;  // steps of that pass already applied
  std::int64_t global_step = 0;   // steps applied since training began
  std::uint64_t seed = 0;
  std::vector<std::vector<std::uint8_t>> consumed;  // [train shard][sample]
};

struct Checkpoint {
  ModelState model;
  TrainingState training;
};

struct WriteOptions {
  int keep = 0;                         // keep the newest N complete checkpoints (0: all)
  std::function<void()> between_files;  // if set, called between the files (run_common/run_hooks.h)
};

std::filesystem::path checkpoints_folder(const std::filesystem::path& output_dir);

// Writes a new checkpoint under a temporary name and renames it into place after its MANIFEST; then prunes old
// ones. Returns the final folder. Throws Error(kOutput) naming what failed; nothing partial is left behind
// under a checkpoint name.
std::filesystem::path write_checkpoint(const std::filesystem::path& output_dir, const Checkpoint& checkpoint,
                                       const std::vector<nn::ParameterInfo>& parameters, const std::string& config_ini,
                                       const WriteOptions& options);

// The same in three steps, for checkpoints that several ranks write into (the server shards' table rows,
// table_rows.h): rank 0 creates the temporary folder, the others write their files into it, rank 0 publishes it
// (its own files, the MANIFEST listing every file, the rename) or discards it when anyone failed.
std::filesystem::path create_checkpoint_folder(const std::filesystem::path& output_dir, std::int64_t global_step);
// `written` holds the MANIFEST entries of the files the other ranks wrote (they computed them in parallel).
std::filesystem::path publish_checkpoint(const std::filesystem::path& temporary,
                                         const std::filesystem::path& output_dir, const Checkpoint& checkpoint,
                                         const std::vector<nn::ParameterInfo>& parameters,
                                         const std::string& config_ini, const WriteOptions& options,
                                         const std::vector<ManifestEntry>& written = {});
void discard_checkpoint_folder(const std::filesystem::path& temporary);

// Verifies the manifest, then reads; `parameters` and `flat_size` describe the model to load into, `optimizer`
// the kind this run uses, `shard_sizes` the sample counts of this run's training shards, `state_layout` the
// model's non-trainable state. Throws Error(kInputData) naming the folder and the mismatch (another model,
// another optimizer, other data, corrupt file).
// `checksum` as verify_manifest's (default: every file's checksum).
Checkpoint read_checkpoint(const std::filesystem::path& folder, const std::vector<nn::ParameterInfo>& parameters,
                           std::size_t flat_size, const std::string& optimizer,
                           const std::vector<std::uint64_t>& shard_sizes,
                           const std::vector<nn::ParameterInfo>& state_layout = {},
                           const std::function<bool(const std::string&)>& checksum = {});

// Complete-looking checkpoint folders (ckpt-*), newest first.
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& output_dir);

// Removes temporary folders left by a writer that was killed; returns their names.
std::vector<std::string> remove_stale_temporaries(const std::filesystem::path& output_dir);

}  // namespace pstrain::checkpoint
