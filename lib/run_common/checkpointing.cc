#include "run_common/checkpointing.h"

#include <limits>
#include <sstream>

#include "checkpoint/pass_folder.h"
#include "checkpoint/table_rows.h"
#include "comm/communicator.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/log.h"
#include "core/stop_signals.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "run_common/keyed_checkpoint.h"

namespace pstrain::run_common {

namespace fs = std::filesystem;

SampleIndex::SampleIndex(const std::vector<std::uint64_t>& shard_sizes) : offsets_{0} {
  for (const std::uint64_t size : shard_sizes) offsets_.push_back(offsets_.back() + size);
}

std::vector<std::vector<std::uint8_t>> SampleIndex::split(const std::vector<std::uint8_t>& flat) const {
  std::vector<std::vector<std::uint8_t>> per_shard;
  for (std::size_t shard = 0; shard + 1 < offsets_.size(); ++shard) {
    per_shard.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(offsets_[shard]),
                           flat.begin() + static_cast<std::ptrdiff_t>(offsets_[shard + 1]));
  }
  return per_shard;
}

std::vector<std::uint8_t> SampleIndex::join(const std::vector<std::vector<std::uint8_t>>& per_shard) const {
  std::vector<std::uint8_t> flat;
  flat.reserve(total());
  for (const auto& shard : per_shard) flat.insert(flat.end(), shard.begin(), shard.end());
  return flat;
}

checkpoint::Checkpoint load_checkpoint(const JobContext& job, const fs::path& folder, bool chosen) {
  const auto checksum = [chosen](const std::string& name) { return !chosen || !checkpoint::is_table_rows_file(name); };
  return checkpoint::read_checkpoint(folder, job.dense_parameters, job.dense_count, job.config.optimizer.kind,
                                     job.data.shard_samples, job.model.state, checksum);
}

CheckpointChoice choose_checkpoint(const JobContext& job) {
  const std::string& wanted = job.config.resume;
  if (wanted != "auto") {
    if (!fs::exists(wanted)) {
      throw Error(ExitCode::kInputData, cat("--resume ", wanted, ": no such checkpoint folder (checkpoints are ",
                                            "OUTPUT/checkpoints/ckpt-N; --resume auto takes the newest that fits)"));
    }
    if (!checkpoint::list_checkpoints(wanted).empty() || !checkpoint::list_pass_folders(wanted).empty()) {
      throw Error(ExitCode::kUsage, cat("--resume ", wanted, " is a run folder, not a checkpoint: give one of its ",
                                        "checkpoints/ckpt-N folders, or --output-dir ", wanted, " --resume auto"));
    }
    load_checkpoint(job, wanted);  // throws, naming what is wrong
    return {fs::path(wanted), {}};
  }
  CheckpointChoice choice;
  for (const fs::path& folder : checkpoint::list_checkpoints(job.config.output_dir)) {
    try {
      load_checkpoint(job, folder);
      choice.chosen = folder;
      break;
    } catch (const Error& error) {
      choice.skipped.emplace_back(folder, error.what());
    }
  }
  return choice;
}

CheckpointWriter::CheckpointWriter(const JobContext& job, std::string config_ini)
    : job_(job), config_ini_(std::move(config_ini)), last_saved_(Clock::now()) {}

int CheckpointWriter::local_flags() const {
  int flags = 0;
  if (stop_signal_received()) flags |= exchange::kCheckpointNow | exchange::kStopAfterCheckpoint;
  const double every = job_.config.checkpoint_every_seconds;
  if (every > 0 && job_.layout.world_rank == 0 && seconds_since(last_saved_) >= every) {
    flags |= exchange::kCheckpointNow;
  }
  return flags;
}

int CheckpointWriter::async_wish(std::int64_t global_step, bool lead) const {
  if (stop_signal_received()) return exchange::kCheckpointNow | exchange::kStopAfterCheckpoint;
  if (!lead) return 0;
  const std::int64_t every = job_.config.checkpoint_every_steps;
  const double seconds = job_.config.checkpoint_every_seconds;
  const bool by_steps = every > 0 && global_step % every == 0;
  const bool by_time = seconds > 0 && seconds_since(last_saved_) >= seconds;
  return by_steps || by_time ? exchange::kCheckpointNow : 0;
}

namespace {
constexpr int kModelStateTag = 7301;  // the lead trainer's model state to rank 0, inside a checkpoint
constexpr int kModelSliceTag = 7302;  // a contributor's dense blocks to rank 0, inside a checkpoint
}  // namespace

namespace {

// Every rank's failure (or none) agreed; the writer removes the unpublished folder when there is one.
void agree_or_discard(const std::optional<comm::Failure>& failure, const fs::path& temporary) {
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) {
    if (!temporary.empty()) checkpoint::discard_checkpoint_folder(temporary);
    throw AgreedFailure(static_cast<ExitCode>(code));
  }
}

// Rank 0's message for a checkpoint it could not write: what failed, and what the user still has.
comm::Failure not_written(const fs::path& output_dir, std::int64_t global_step, const Error& error) {
  const auto kept = checkpoint::list_checkpoints(output_dir);
  return {static_cast<int>(error.code()),
          cat("checkpoint at step ", global_step, " not written: ", error.what(), "; ",
              kept.empty() ? std::string("no earlier checkpoint exists")
                           : cat("the last good checkpoint, ", kept.front().string(), ", is intact"))};
}

}  // namespace

fs::path CheckpointWriter::open_folder(std::int64_t global_step) const {
  std::optional<comm::Failure> failure;
  std::string temporary;
  if (job_.layout.world_rank == 0) {
    try {
      temporary = checkpoint::create_checkpoint_folder(job_.config.output_dir, global_step).string();
    } catch (const Error& error) {
      failure = not_written(job_.config.output_dir, global_step, error);
    }
  }
  agree_or_discard(failure, {});
  int length = static_cast<int>(temporary.size());
  MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD));
  temporary.resize(static_cast<std::size_t>(length));
  MPI_CHECK(MPI_Bcast(temporary.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD));
  return temporary;
}

std::vector<checkpoint::ManifestEntry> CheckpointWriter::write_table_rows(const ps::ModelPartition& plan,
                                                                          const ps::SliceState* slice,
                                                                          const fs::path& temporary) const {
  std::optional<comm::Failure> failure;
  std::vector<checkpoint::ManifestEntry> mine;
  const int shard = job_.layout.world_rank;
  for (std::size_t t = 0; slice != nullptr && t < slice->tables.size(); ++t) {
    const ps::TableSpec& table = plan.tables().table(t);
    try {
      if (table.exact_keys()) {
        checkpoint::write_keyed_table_rows(temporary, {table.name, table.rows, table.width}, shard, plan.shards(),
                                           keyed_rows_to_save(slice->tables[t]->keyed_state()));
      } else {
        slice->tables[t]->visit_rows([&](std::span<const float> rows, const auto& state) {
          checkpoint::write_table_rows(temporary, {table.name, table.rows, table.width}, shard, plan.shards(), rows,
                                       state);
        });
      }
      // Each shard fsyncs and checksums its own file, all at once, instead of rank 0 reading them all.
      mine.push_back(
          checkpoint::manifest_entry(temporary, checkpoint::table_rows_file(table.name, shard, plan.shards())));
    } catch (const Error& error) {
      failure = comm::Failure{static_cast<int>(error.code()),
                              cat("checkpoint not written: server shard ", shard, " could not save its rows of ",
                                  table.name, ": ", error.what())};
      break;
    }
  }
  agree_or_discard(failure, job_.layout.world_rank == 0 ? temporary : fs::path());
  return gather_entries(mine);
}

std::vector<checkpoint::ManifestEntry> CheckpointWriter::write_trainer_states(const checkpoint::OptimizerVectors* state,
                                                                              const fs::path& temporary) const {
  if (!job_.mode().trainers_step_alone || job_.layout.pservers == 0) return {};
  std::optional<comm::Failure> failure;
  std::vector<checkpoint::ManifestEntry> mine;
  const int trainer = job_.layout.trainer_index;
  const int trainers = job_.layout.trainers;
  if (state != nullptr) {
    try {
      checkpoint::write_trainer_state(temporary, trainer, trainers, job_.dense_parameters, *state);
      mine.push_back(checkpoint::manifest_entry(temporary, checkpoint::trainer_state_file(trainer, trainers)));
    } catch (const Error& error) {
      failure =
          comm::Failure{static_cast<int>(error.code()), cat("checkpoint not written: trainer ", trainer,
                                                            " could not save its optimizer state: ", error.what())};
    }
  }
  agree_or_discard(failure, job_.layout.world_rank == 0 ? temporary : fs::path());
  return gather_entries(mine);
}

std::vector<checkpoint::ManifestEntry> CheckpointWriter::gather_entries(
    const std::vector<checkpoint::ManifestEntry>& mine) const {
  std::string text;  // "crc size name" lines
  for (const auto& entry : mine) text += cat(entry.crc32, " ", entry.size, " ", entry.name, "\n");
  const int world_size = job_.layout.world_size;
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(world_size, 0);
  MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  std::vector<int> displacements(world_size, 0);
  for (int rank = 1; rank < world_size; ++rank) displacements[rank] = displacements[rank - 1] + lengths[rank - 1];
  std::string all(job_.layout.world_rank == 0 ? displacements.back() + lengths.back() : 0, '\0');
  MPI_CHECK(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displacements.data(), MPI_CHAR, 0,
                        MPI_COMM_WORLD));
  std::vector<checkpoint::ManifestEntry> entries;
  std::istringstream lines(all);
  checkpoint::ManifestEntry entry;
  while (lines >> entry.crc32 >> entry.size >> entry.name) entries.push_back(entry);
  return entries;
}

void CheckpointWriter::save(const ps::ModelPartition& plan, const ps::SliceState* slice,
                            const std::vector<std::uint8_t>& consumed, const checkpoint::TrainingState& progress,
                            std::span<const float> model_state, const checkpoint::OptimizerVectors* trainer_state) {
  const comm::Watchdog::Wait wait("a checkpoint (gathering the model state)");
  const auto start = Clock::now();
  const bool writer = job_.layout.world_rank == 0;
  checkpoint::Checkpoint checkpoint;
  checkpoint.training = progress;
  std::int64_t counters[3] = {progress.pass, progress.step_in_pass, progress.global_step};
  const int lead = job_.layout.pservers == 0 ? 0 : job_.layout.trainer_rank(0);
  MPI_CHECK(MPI_Bcast(counters, 3, MPI_INT64_T, lead, MPI_COMM_WORLD));
  checkpoint.training.pass = counters[0];
  checkpoint.training.step_in_pass = counters[1];
  checkpoint.training.global_step = counters[2];
  checkpoint.training.seed = job_.config.seed;
  // The tables' rows first, each shard its own file; then the rest of the model state, gathered to the writer.
  const fs::path temporary = open_folder(counters[2]);
  std::vector<checkpoint::ManifestEntry> files = write_table_rows(plan, slice, temporary);
  for (checkpoint::ManifestEntry& entry : write_trainer_states(trainer_state, temporary)) files.push_back(entry);
  gather_model_state(plan, slice, model_state, lead, checkpoint.model);

  const SampleIndex index(job_.data.shard_samples);
  std::vector<std::uint8_t> mine = consumed.empty() ? std::vector<std::uint8_t>(index.total(), 0) : consumed;
  std::vector<std::uint8_t> all(writer ? index.total() : 0);
  MPI_CHECK(
      MPI_Reduce(mine.data(), all.data(), static_cast<int>(index.total()), MPI_UINT8_T, MPI_MAX, 0, MPI_COMM_WORLD));

  std::optional<comm::Failure> failure;
  fs::path written;
  if (writer) {
    checkpoint.training.consumed = index.split(all);
    try {
      written = checkpoint::publish_checkpoint(temporary, job_.config.output_dir, checkpoint, job_.dense_parameters,
                                               config_ini_,
                                               {job_.config.keep_checkpoints,
                                                [this] { job_.hooks->between_checkpoint_files(); }},
                                               files);
    } catch (const Error& error) {
      failure = not_written(job_.config.output_dir, progress.global_step, error);
    }
  }
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure))
    throw AgreedFailure(static_cast<ExitCode>(code));
  last_saved_ = Clock::now();
  if (writer) {
    log_info("checkpoint ", written.filename().string(), " (pass ", counters[0], ", step ", counters[1],
             ") written in ", seconds_since(start), " s");
  }
}

void CheckpointWriter::gather_model_state(const ps::ModelPartition& plan, const ps::SliceState* slice,
                                          std::span<const float> model_state, int lead,
                                          checkpoint::ModelState& model) const {
  const bool writer = job_.layout.world_rank == 0;
  const int world_size = job_.layout.world_size;
  std::vector<std::size_t> counts(world_size, 0);
  for (int rank = 0; rank < world_size; ++rank)
    counts[rank] = rank < plan.shards() ? plan.blocks().shard_size(rank) : 0;
  const auto message_length = [&counts](int rank) {
    PSTRAIN_ASSERT(counts[rank] <= static_cast<std::size_t>(std::numeric_limits<int>::max()), "shard ", rank, "'s ",
                   counts[rank], " floats in one message");
    return static_cast<int>(counts[rank]);
  };
  // Gathers one vector of the model state (the contributors' dense blocks) into the dense layout on rank 0: its own
  // blocks straight from `mine`, each other contributor's received and placed in turn, so that rank 0 holds the
  // dense vector and one shard's blocks at most, never a second copy of the model.
  const auto gather = [&](std::span<const float> mine) {
    std::vector<float> dense(writer ? plan.dense_size() : 0);
    if (writer) {
      if (counts[0] > 0) plan.scatter_dense(0, mine, dense);
      std::vector<float> received;
      for (int rank = 1; rank < plan.shards(); ++rank) {
        received.resize(counts[rank]);
        MPI_CHECK(MPI_Recv(received.data(), message_length(rank), MPI_FLOAT, rank, kModelSliceTag, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
        plan.scatter_dense(rank, received, dense);
      }
    } else if (job_.layout.world_rank < plan.shards()) {
      MPI_CHECK(
          MPI_Send(mine.data(), message_length(job_.layout.world_rank), MPI_FLOAT, 0, kModelSliceTag, MPI_COMM_WORLD));
    }
    return dense;
  };
  model.optimizer = job_.config.optimizer.kind;
  model.parameters = gather(slice ? slice->parameters : std::span<const float>());
  int state_vectors = slice ? static_cast<int>(slice->optimizer.size()) : 0;
  MPI_CHECK(MPI_Bcast(&state_vectors, 1, MPI_INT, 0, MPI_COMM_WORLD));
  for (int i = 0; i < state_vectors; ++i) {
    auto dense = gather(slice ? slice->optimizer[static_cast<std::size_t>(i)].second : std::span<const float>());
    if (writer)
      model.optimizer_state.emplace_back(slice->optimizer[static_cast<std::size_t>(i)].first, std::move(dense));
  }
  if (writer) model.optimizer_steps = slice->optimizer_steps;
  // The non-trainable state (averaged over the trainers by now, see model_state.h) comes from the lead trainer.
  if (job_.model.state_count == 0) return;
  const int count = static_cast<int>(job_.model.state_count);
  if (writer) {
    model.state_layout = job_.model.state;
    model.state.resize(job_.model.state_count);
  }
  if (lead == 0) {
    if (writer) std::copy(model_state.begin(), model_state.end(), model.state.begin());
  } else if (job_.layout.world_rank == lead) {
    MPI_CHECK(MPI_Send(model_state.data(), count, MPI_FLOAT, 0, kModelStateTag, MPI_COMM_WORLD));
  } else if (writer) {
    MPI_CHECK(MPI_Recv(model.state.data(), count, MPI_FLOAT, lead, kModelStateTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
}

}  // namespace pstrain::run_common
