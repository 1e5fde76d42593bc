#pragma once
// When and how a job writes and reads its resumable checkpoints (lib/checkpoint/checkpoint.h holds the format).
//
// When every rank saves (at common step boundaries, or by request in async runs): exchange/step_protocol.h.
// Rank 0 opens the checkpoint's temporary folder; each server shard writes its rows of the row tables there
// (checkpoint/table_rows.h); the rest of the model state is gathered to rank 0 from whoever holds it (the server
// shards' dense blocks, or the local trainer's whole vector); every trainer contributes a flag per training
// sample it has consumed in the pass in progress. Rank 0 writes the rest and publishes; each failure is agreed,
// so every rank ends with one message and nothing half-written is published.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/trainer_states.h"
#include "ps/server.h"
#include "ps/table_plan.h"
#include "run_common/job_context.h"

namespace pstrain::run_common {

// Sample ids: the training samples of all shards, numbered shard after shard (shard 0's first sample is 0).
class SampleIndex {
 public:
  explicit SampleIndex(const std::vector<std::uint64_t>& shard_sizes);
  std::uint64_t total() const { return offsets_.back(); }
  std::uint64_t id(std::size_t shard, std::uint64_t sample) const { return offsets_.at(shard) + sample; }
  std::vector<std::vector<std::uint8_t>> split(const std::vector<std::uint8_t>& flat) const;
  std::vector<std::uint8_t> join(const std::vector<std::vector<std::uint8_t>>& per_shard) const;

 private:
  std::vector<std::uint64_t> offsets_;  // shard starts, plus the total at the end
};

// Which checkpoint to resume from (called on rank 0 only): --resume auto takes the newest one that verifies and
// reads, listing each one it skips and why (none chosen: the caller decides between a fresh start and a refusal,
// job/run_folder.h); --resume PATH takes that one or throws Error(kInputData) saying why not.
struct CheckpointChoice {
  std::optional<std::filesystem::path> chosen;
  std::vector<std::pair<std::filesystem::path, std::string>> skipped;  // newer ones passed over, with the reason
};
CheckpointChoice choose_checkpoint(const JobContext& job);

// Reads a checkpoint checked against this run's model, optimizer and data (any rank). `chosen`: rank 0 has just
// verified every file of it (choose_checkpoint), so the row files, the bulk of a large table's checkpoint, are
// not read whole again on every rank for their checksums (their sizes are checked).
checkpoint::Checkpoint load_checkpoint(const JobContext& job, const std::filesystem::path& folder, bool chosen = false);

class CheckpointWriter {
 public:
  CheckpointWriter(const JobContext& job, std::string config_ini);

  // This rank's wishes for the agreed flags of the step that just ended (signals; the time-based trigger is
  // rank 0's clock so that one clock decides).
  int local_flags() const;
  // Async: what this trainer asks for after `global_step`: a signal from anyone; the step and time triggers from
  // the lead trainer only (one clock decides).
  int async_wish(std::int64_t global_step, bool lead) const;

  // Collective over world. `partition` splits the model state among world ranks [0, contributors): the server
  // shards in distributed mode (their dense blocks and table rows), the single rank in local mode. `slice` is this
  // rank's share (or null), `consumed` this rank's flags over all sample ids (empty on servers). `progress` counts as
  // given by the lead trainer (the first trainer, or the only rank), whose steps number the checkpoints. `model_state`
  // is the model's non-trainable state on the lead trainer (empty elsewhere, and for models without state).
  // `trainer_state`: this trainer's own optimizer state where trainers keep one while the servers hold the model
  // (--mode geo, checkpoint/trainer_states.h); null elsewhere.
  void save(const ps::ModelPartition& partition, const ps::SliceState* slice, const std::vector<std::uint8_t>& consumed,
            const checkpoint::TrainingState& progress, std::span<const float> model_state = {},
            const checkpoint::OptimizerVectors* trainer_state = nullptr);

 private:
  // The temporary folder of the checkpoint at `global_step`, created by rank 0, its name known everywhere.
  std::filesystem::path open_folder(std::int64_t global_step) const;
  // Each server shard's rows of every row table, into a file of its own in `temporary`; returns (on rank 0) the
  // MANIFEST entries of all of them, computed by their writers.
  std::vector<checkpoint::ManifestEntry> write_table_rows(const ps::ModelPartition& plan, const ps::SliceState* slice,
                                                          const std::filesystem::path& temporary) const;
  // Each trainer's own optimizer state (geo), a file per trainer in `temporary`; returns (on rank 0) their MANIFEST
  // entries. Collective over the world where the mode's trainers keep a state; nothing elsewhere.
  std::vector<checkpoint::ManifestEntry> write_trainer_states(const checkpoint::OptimizerVectors* state,
                                                              const std::filesystem::path& temporary) const;
  std::vector<checkpoint::ManifestEntry> gather_entries(const std::vector<checkpoint::ManifestEntry>& mine) const;
  // The dense blocks, optimizer vectors and non-trainable state, gathered into `model` on rank 0.
  void gather_model_state(const ps::ModelPartition& plan, const ps::SliceState* slice,
                          std::span<const float> model_state, int lead, checkpoint::ModelState& model) const;

  const JobContext& job_;
  std::string config_ini_;
  mutable std::chrono::steady_clock::time_point last_saved_;
};

}  // namespace pstrain::run_common
