#include "train/job.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "checkpoint/checkpoint.h"
#include "checkpoint/pass_folder.h"
#include "comm/communicator.h"
#include "comm/environment.h"
#include "comm/mpi_check.h"
#include "comm/node_sharing.h"
#include "comm/watchdog.h"
#include "compute/cpu/blas_kernels.h"
#include "core/files.h"
#include "core/log.h"
#include "core/options.h"
#include "core/test_hooks.h"
#include "exchange/step_protocol.h"
#include "ps/client.h"
#include "ps/server.h"
#include "ps/shard_plan.h"
#include "ps/table_client.h"
#include "report/json_line.h"
#include "report/run_summary.h"
#include "train/checkpointing.h"
#include "train/exchange_factory.h"
#include "train/memory_check.h"
#include "train/model_factory.h"
#include "train/overlap_plan.h"
#include "train/program_text.h"
#include "train/progress.h"
#include "train/provenance.h"
#include "train/run_folder.h"
#include "train/run_state.h"
#include "train/server_role.h"
#include "train/server_start.h"
#include "train/table_layout.h"
#include "train/trainer_loop.h"

extern char** environ;

namespace pstrain::train {

namespace {

namespace fs = std::filesystem;
using comm::Failure;

// Runs `work`, turning a pstrain::Error (or any exception) into a Failure for agree_on_failure.
template <typename Work>
std::optional<Failure> attempt(Work&& work) {
  try {
    work();
    return std::nullopt;
  } catch (const Error& error) {
    return Failure{static_cast<int>(error.code()), error.what()};
  } catch (const std::exception& error) {
    return Failure{static_cast<int>(ExitCode::kInternal), cat("internal error: ", error.what())};
  }
}

// On resume, the passes from the checkpoint's on will be trained again: their old metrics lines go (the pass
// folders are replaced when rewritten).
void forget_passes_from(const fs::path& output_dir, std::int64_t first_pass) {
  const fs::path metrics = output_dir / "metrics.jsonl";
  std::ifstream in(metrics);
  if (!in) return;
  std::string kept;
  std::string line;
  while (std::getline(in, line)) {
    const auto record = report::parse_json_object(line);
    const auto pass = record ? report::number_field(*record, "pass") : std::nullopt;
    if (!record) {
      log_warning("dropped a line of ", metrics.string(), " that is not a JSON object (cut short by a crash?)");
    } else if (!pass || *pass < static_cast<double>(first_pass)) {
      kept += line + "\n";
    }
  }
  write_file_atomically(metrics, kept);
}

// Rank 0, once every rank has agreed that training starts: the folder is claimed (created, locked for the
// run's lifetime) and only now written: the resolved flags, the provenance, and on a resume the records of what
// will be trained again go.
void write_run_records(const JobContext& job, const std::string& resolved_ini, const RunState& run) {
  if (run.resumed) {
    for (const std::string& stray : checkpoint::remove_stale_temporaries(job.config.output_dir)) {
      log_warning("removed ", stray, ", an unfinished checkpoint of an earlier run");
    }
    forget_passes_from(job.config.output_dir, run.resumed->training.pass);
  }
  write_file_atomically(job.config.output_dir / "config.ini", resolved_ini);
  write_provenance(job, resolved_ini);
}

// Rank 0: the checkpoint this run resumes from, or "" for a fresh start (train/run_folder.h states when that is
// allowed).
std::string checkpoint_to_resume(const JobContext& job, const FolderContents& folder, const std::string& resolved_ini) {
  const CheckpointChoice choice = choose_checkpoint(job);
  if (choice.chosen) {
    for (const auto& [skipped, why] : choice.skipped) log_warning("skipping checkpoint ", skipped.string(), ": ", why);
    return choice.chosen->string();
  }
  if (folder.holds_run()) {
    throw Error(ExitCode::kUsage, resume_refusal(job.config.output_dir, folder, choice.skipped, resolved_ini));
  }
  log_info("--resume auto: ", job.config.output_dir.string(), " holds no earlier run; starting fresh");
  return "";
}

// How many updates each optimizer (every shard's, or the local one) applies over the run: one per sync step,
// one per trainer push in async mode. The learning-rate schedule runs over this count.
std::uint64_t total_updates(const JobContext& job) {
  const bool sync = job.steps_together();
  std::int64_t per_pass = 0;
  if (sync) {
    per_pass = job.data.steps_per_pass(0, job.config.batch_size, true);
  } else if (job.config.dynamic_dispatch) {  // every chunk once per pass, whoever takes it
    const std::uint64_t samples = job.data.shard_samples.empty() ? 0 : job.data.trainer_samples.at(0);
    const std::uint64_t chunk = job.config.chunk_size;
    const std::uint64_t full_chunks = samples / chunk;
    const std::uint64_t batches_per_chunk = (chunk + job.config.batch_size - 1) / job.config.batch_size;
    per_pass = static_cast<std::int64_t>(full_chunks * batches_per_chunk +
                                         (samples % chunk + job.config.batch_size - 1) / job.config.batch_size);
  } else {
    for (int trainer = 0; trainer < job.layout.trainers; ++trainer) {
      per_pass += job.data.steps_per_pass(trainer, job.config.batch_size, false);
    }
  }
  return static_cast<std::uint64_t>(per_pass) * static_cast<std::uint64_t>(job.config.passes);
}

// The trainer's samples: its shards concatenated in index order. Under dynamic dispatch every shard is the
// trainer's, read a chunk at a time as it is given (train/trainer_samples.h); each trainer still reads the shards
// static sharding would give it once here, so that every shard's contents are checked before training starts.
TrainerSamples load_trainer_samples(const JobContext& job) {
  const int trainer = job.layout.trainer_index;
  if (job.config.dynamic_dispatch) {
    std::vector<std::filesystem::path> shards;
    std::vector<std::uint64_t> counts;
    for (const std::size_t index : job.data.trainer_shards.at(trainer)) {
      if (index % static_cast<std::size_t>(job.layout.trainers) == static_cast<std::size_t>(trainer)) {
        data::read_shard(job.data.train_shards[index]);
      }
      shards.push_back(job.data.train_shards[index]);
      counts.push_back(job.data.shard_samples[index]);
    }
    return TrainerSamples(std::move(shards), std::move(counts), job.data.meta);
  }
  data::Samples all;
  for (const std::size_t index : job.data.trainer_shards.at(trainer)) {
    data::Samples shard = data::read_shard(job.data.train_shards[index]);
    if (all.labels.empty()) all.meta = shard.meta;
    all.features.insert(all.features.end(), shard.features.begin(), shard.features.end());
    all.labels.insert(all.labels.end(), shard.labels.begin(), shard.labels.end());
  }
  all.meta.sample_count = all.labels.size();
  return TrainerSamples(std::move(all));
}

std::vector<float> initial_parameters(const JobContext& job) {
  if (job.config.init_from) {
    return checkpoint::read_pass_parameters(*job.config.init_from, job.model.parameters, job.model.parameter_count);
  }
  return nn::initial_parameters(job.model, job.config.seed);
}

// What the row tables cost per step on this trainer, beside what the dense part costs (benchmarks/ read it).
void log_table_traffic(const ps::TableTraffic& traffic, const ps::ShardPlan& dense) {
  const double steps = static_cast<double>(std::max<std::uint64_t>(traffic.pushes, 1));
  std::size_t served = 0;
  for (int shard = 0; shard < dense.shards(); ++shard) served += dense.shard_size(shard);
  log_info("row tables per step: ", static_cast<double>(traffic.rows_fetched) / steps, " rows fetched, ",
           static_cast<double>(traffic.rows_pushed) / steps, " pushed, ", static_cast<double>(traffic.bytes) / steps,
           " bytes; the dense part: ", 2 * (served + 1) * sizeof(float), " bytes (push and pull of ", served,
           " floats)");
}

// `model` is null on servers.
bool run_distributed(const JobContext& job, compute::Backend& backend, nn::Model* model, RunState& run) {
  const comm::Communicator trainers =
      comm::Communicator::split(MPI_COMM_WORLD, job.layout.is_trainer() ? 0 : MPI_UNDEFINED, job.layout.world_rank);
  const ps::TablePlan& tables = job.tables;
  const ps::ShardPlan plan = server_blocks(job);
  const ps::ModelPartition partition(plan, tables);
  ps::PsWindows windows(MPI_COMM_WORLD, job.layout, plan);
  const OverlapPlan overlap = plan_overlap(job);
  const comm::Communicator channel = comm::Communicator::duplicate(MPI_COMM_WORLD);  // streamed sync steps
  std::vector<ps::TableWindows> table_windows;
  for (std::size_t t = 0; t < tables.size(); ++t) table_windows.emplace_back(MPI_COMM_WORLD, job.layout, tables, t);
  bool completed = true;
  if (job.layout.is_server()) {
    completed =
        run_server(job, windows, table_windows, overlap.sync, channel.handle(), partition, run, job.model.parameters);
  } else {
    // The trainer's flat vector is the dense layout, then its row caches (train/table_layout.h): the same blocks
    // dealt the same way, at their offsets in that layout.
    std::vector<std::size_t> dense_sizes;
    for (const nn::ParameterInfo& parameter : job.dense_parameters) dense_sizes.push_back(parameter.size);
    const ps::ShardPlan dense_blocks(dense_sizes, job.layout.pservers, job.config.block_size);
    for (int shard = 0; shard < plan.shards(); ++shard) {
      PSTRAIN_ASSERT(dense_blocks.shard_size(shard) == plan.shard_size(shard), "shard ", shard, " holds ",
                     plan.shard_size(shard), " floats, the dense layout deals it ", dense_blocks.shard_size(shard));
    }
    ps::PsClient client(windows, dense_blocks, job.layout);
    ps::TableClient table_client(table_windows, tables, row_caches(job, largest_batch(job)), job.layout);
    if (job.layout.is_lead_trainer()) {
      for (std::size_t t = 0; t < tables.size(); ++t) {
        log_info("table ", tables.table(t).name, " (", tables.rows(t).rows(), " x ", tables.table(t).width,
                 ") is held by rows on the servers: a step fetches and updates only the rows its batch looks up");
      }
    }
    exchange::meet_all_ranks("the start (waiting for the servers)");  // every slice initialised
    auto gradient_exchange =
        make_exchange(job, {backend, *model, trainers.handle(), &client, run, tables.empty() ? nullptr : &table_client,
                            overlap, &dense_blocks, channel.handle()});
    DataDispatch dispatch;
    if (job.config.dynamic_dispatch) {
      dispatch.take_chunk = [&client] {
        const comm::Watchdog::Wait wait("taking a chunk of samples from the dispatcher on server 0");
        return client.take_chunk();
      };
      dispatch.reset = [&client] { client.reset_chunks(); };
    }
    completed =
        run_trainer(job, backend, *model, *gradient_exchange, trainers.handle(), run.samples, {run.test, run.valid},
                    *run.progress, {run.writer.get(), &partition, !job.mode().common_steps}, dispatch);
    if (!tables.empty()) log_table_traffic(table_client.traffic(), plan);
  }
  exchange::meet_all_ranks("the end of training");  // nobody frees windows while another rank still uses them
  return completed;
}

bool run_local(const JobContext& job, compute::Backend& backend, nn::Model& model, RunState& run) {
  auto gradient_exchange = make_exchange(job, {backend, model, MPI_COMM_SELF, nullptr, run});
  const ps::ShardPlan whole(parameter_sizes(job.model), 1, job.model.parameter_count);
  const ps::TablePlan no_tables;
  const ps::ModelPartition partition(whole, no_tables);
  return run_trainer(job, backend, model, *gradient_exchange, MPI_COMM_SELF, run.samples, {run.test, run.valid},
                     *run.progress, {run.writer.get(), &partition});
}

// Every rank a trainer with the whole model; world rank 0 contributes the model state to checkpoints.
bool run_allreduce(const JobContext& job, compute::Backend& backend, nn::Model& model, RunState& run) {
  ExchangeParts parts{backend, model, MPI_COMM_WORLD, nullptr, run};
  parts.overlap = plan_overlap(job);
  auto gradient_exchange = make_exchange(job, parts);
  const ps::ShardPlan whole(parameter_sizes(job.model), 1, job.model.parameter_count);
  const ps::TablePlan no_tables;
  const ps::ModelPartition partition(whole, no_tables);
  const bool completed = run_trainer(job, backend, model, *gradient_exchange, MPI_COMM_WORLD, run.samples,
                                     {run.test, run.valid}, *run.progress, {run.writer.get(), &partition});
  exchange::meet_all_ranks("the end of training");
  return completed;
}

// The one line an error during training leaves, in the form of every other error that ends pstrain ("pstrain:
// error: ...", which scripts and tests look for), with the rank that met it; then every rank ends with `code`.
[[noreturn]] void end_job_on_error(int rank, ExitCode code, const std::string& message) {
  std::cerr << "pstrain: error: rank " << rank << ": " << message << std::endl;
  comm::MpiEnvironment::abort_job(static_cast<int>(code));
}

}  // namespace

int run_job(int argc, char** argv) {
  comm::MpiEnvironment mpi(argc, argv);
  const int rank = mpi.world_rank();
  Logger& logger = Logger::instance();
  logger.set_identity(cat("rank ", rank));
  logger.set_console(rank == 0);
  // Collective, so outside any step that can fail on one rank only.
  const comm::Communicator node = comm::Communicator::split_shared(MPI_COMM_WORLD);

  // Phase 1: configuration, identical on every rank.
  JobContext job;
  FolderContents folder;  // rank 0: what --output-dir held when the run started
  std::string resolved_ini;
  bool exit_early = false;
  auto failure = attempt([&] {
    const auto user_options = train_options();
    const LayeredOptions options = parse_layered_options(user_options, argc, argv, environ);
    if (options.help_requested || options.version_requested) {
      if (rank == 0) std::cout << (options.help_requested ? usage_text(user_options) : version_text());
      exit_early = true;
      return;
    }
    job.config = resolve_train_config(options.values);
    test_hooks();  // a malformed PSTRAIN_TEST_HOOKS fails here, on every rank alike, not mid-run
    job.layout = comm::make_layout(rank, mpi.world_size(), job.config.num_pservers, !job.mode().has_servers);
    job.layout.local_rank = node.rank();
    job.layout.local_size = node.size();
    optim::make_optimizer(job.config.optimizer, 0);  // validates the optimizer flags on every rank
    resolved_ini = to_ini(options.values);
  });
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;
  if (exit_early) return 0;
  {
    const comm::Communicator node_trainers =
        comm::Communicator::split(node.handle(), job.layout.is_trainer() ? 0 : MPI_UNDEFINED, job.layout.world_rank);
    if (job.layout.is_trainer()) job.layout.local_trainer_rank = node_trainers.rank();
  }
  logger.set_identity(job.layout.describe());
  logger.set_console(job.layout.is_lead_trainer());

  // Phase 2: output folder (rank 0) and data layout (every rank, metadata only).
  failure = attempt([&] {
    if (rank == 0 && !job.config.describe_model) {
      folder = inspect_run_folder(job.config.output_dir);
      check_run_folder(job.config.output_dir, !job.config.resume.empty(), job.config.init_from, folder);
    }
    job.data = plan_data(job.config.data_dir, job.layout.trainers, job.config.dynamic_dispatch);
    data::check_augmentable(job.config.augment, job.data.meta);  // images of a size the augmentation fits
    job.model = plan_job_model(job.config, job.data.meta);
    if (job.config.describe_model) {
      if (rank == 0) std::cout << nn::describe_model(job.model) << "\n" << job.model.spec.text;
      exit_early = true;
      return;
    }
    job.config.optimizer.total_updates = total_updates(job);
    job.config.optimizer.updates_per_pass =
        job.config.optimizer.total_updates / static_cast<std::uint64_t>(job.config.passes);
    // An async pass applies T pushes of batch b where a sync pass applies one average of T*b: at --lr / T both
    // move the parameters equally far per pass, so one --lr means the same in both modes (measured: at the full
    // --lr, async with 2 trainers lands ~0.7 points below sync on Fashion-MNIST; at --lr / 2 within 0.1).
    if (job.mode().each_push_updates && job.layout.pservers > 0) {
      job.config.optimizer.learning_rate /= job.layout.trainers;
    }
  });
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;
  if (exit_early) return 0;

  // Phase 2b: the row tables are planned (a table that cannot go by rows is a usage error here, on every rank)
  // and the model fits every node (collective over each node's ranks).
  {
    failure = attempt([&] {
      job.tables = plan_row_tables(job);
      job.dense_parameters = dense_layout(job.model, job.tables);
      job.dense_count = 0;
      for (const nn::ParameterInfo& parameter : job.dense_parameters) job.dense_count += parameter.size;
    });
    if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;
    failure = check_node_memory(job, job.tables, node.handle());
  }
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;

  // Collective over the node: each rank's share of the processors its allocation gives the node's ranks.
  const int cpu_threads = comm::cpu_threads_for_this_rank(node.handle());

  // Phase 3: per-rank logs, the model, samples (trainers), test set (lead), starting parameters.
  std::unique_ptr<compute::Backend> backend;
  std::unique_ptr<nn::Model> model;
  RunState run;
  std::string resume_from;
  failure = attempt([&] {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    log_info(job.layout.describe(), " on ", host, ", local rank ", job.layout.local_rank, " of ", job.layout.local_size,
             " on this node");
    backend = make_backend(job);
    if (job.layout.is_trainer() && job.config.device != "cpu") log_info("compute backend: ", backend->name());
    if (job.layout.is_trainer()) {
      compute::share_blas_threads(cpu_threads);
      log_info("CPU BLAS: ", compute::blas_kernels_description());
    }
    if (job.layout.is_trainer()) {
      model = make_model(job, *backend);
      if (const auto kernels = model->kernel_descriptions(); !kernels.empty()) {
        std::string joined;
        for (const std::string& kernel : kernels) joined += cat(joined.empty() ? "" : "; ", kernel);
        log_info("layer kernels: ", joined);
      }
      model->initialize(job.config.seed);
      // A pass folder is the whole model: batch-norm running statistics come with the parameters.
      if (job.config.init_from && job.model.state_count > 0) {
        model->set_state(
            checkpoint::read_pass_parameters(*job.config.init_from, job.model.state, job.model.state_count));
      }
      run.samples = load_trainer_samples(job);
    }
    if (job.layout.is_lead_trainer()) {
      run.test = data::read_shard(job.data.test_shard);
      if (job.data.valid_shard) run.valid = data::read_shard(*job.data.valid_shard);
    }
    if (job.layout.is_server()) {
      check_server_start(job);
    } else if (job.layout.pservers == 0) {
      run.initial = initial_parameters(job);
    }
    if (rank == 0 && !job.config.resume.empty()) resume_from = checkpoint_to_resume(job, folder, resolved_ini);
  });
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;

  // Phase 3b: every rank reads the checkpoint rank 0 chose.
  int length = static_cast<int>(resume_from.size());
  MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD));
  resume_from.resize(static_cast<std::size_t>(length));
  MPI_CHECK(MPI_Bcast(resume_from.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD));
  failure = attempt([&] {
    if (!resume_from.empty()) {
      run.resumed = load_checkpoint(job, resume_from, /*chosen=*/true);
      run.resumed_from = resume_from;
      if (model && !run.resumed->model.state.empty()) model->set_state(run.resumed->model.state);
    }
    run.progress =
        std::make_unique<Progress>(job, run.resumed ? std::optional<checkpoint::TrainingState>(run.resumed->training)
                                                    : std::nullopt);
    run.writer = std::make_unique<CheckpointWriter>(job, resolved_ini);
  });
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;

  // Phase 3c: training starts; only now is the output folder written (train/run_folder.h).
  std::optional<RunFolderClaim> claim;
  failure = attempt([&] {
    if (rank == 0) {
      claim.emplace(job.config.output_dir);
      write_run_records(job, resolved_ini, run);
    }
  });
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;
  failure = attempt([&] {
    const fs::path node_dir = job.config.output_dir / cat("node_", rank);
    ensure_writable_folder(node_dir);
    logger.open_file(node_dir / (job.layout.is_server() ? "server.log" : "train.log"));
  });
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;
  comm::Watchdog::start(rank, job.layout.world_size, job.config.timeout_seconds, job.config.output_dir);
  install_checkpoint_signal_handlers();
  if (job.layout.is_lead_trainer()) {
    log_info("pstrain ", PSTRAIN_VERSION, ": ", job.layout.world_size, " ranks = ", job.layout.pservers,
             " parameter-server shard(s) + ", job.layout.trainers, " trainer(s), mode ",
             job.layout.world_size > 1 ? to_string(job.config.mode) : std::string("local"), ", ", backend->name(),
             " backend, ", job.model.spec.source, " ", job.model.parameter_count, " parameters, ",
             job.data.total_train_samples(), " training samples, batch ", job.config.batch_size,
             " per trainer, learning rate per update ", job.config.optimizer.learning_rate, " (",
             job.config.optimizer.schedule, job.config.optimizer.nesterov ? ", nesterov" : "", ")",
             job.config.augment.enabled() ? cat(", augment ", data::to_string(job.config.augment)) : std::string());
    if (run.resumed) {
      log_info("resuming from ", resume_from, ": pass ", run.resumed->training.pass, ", step ",
               run.resumed->training.step_in_pass, " of it, global step ", run.resumed->training.global_step);
    }
  }

  // Phase 4: training. From here a failure on one rank cannot be agreed on (others may be inside a barrier or
  // an RMA epoch), so it ends the whole job, unless every rank already agreed on it (a failed checkpoint).
  bool completed = true;
  try {
    if (job.layout.world_size == 1) {
      completed = run_local(job, *backend, *model, run);
    } else if (!job.mode().has_servers) {
      completed = run_allreduce(job, *backend, *model, run);
    } else {
      completed = run_distributed(job, *backend, model.get(), run);
    }
  } catch (const AgreedFailure& failure_everywhere) {
    return static_cast<int>(failure_everywhere.code());
  } catch (const Error& error) {
    end_job_on_error(rank, error.code(), error.what());
  } catch (const std::exception& error) {
    end_job_on_error(rank, ExitCode::kInternal, cat("internal error: ", error.what()));
  }
  // The watchdog stays up through MPI_Finalize (comm::MpiEnvironment's destructor stops it).
  log_info("peak resident memory of this rank: ", static_cast<long long>(peak_resident_bytes() / (1024.0 * 1024.0)),
           " MiB");
  if (job.layout.is_lead_trainer()) {
    if (completed) {
      // One closing line: best and final test metric, total time, where the outputs are.
      const fs::path& output = job.config.output_dir;
      const auto summary = report::summarize_metrics(output / "metrics.jsonl");
      log_info(report::summary_line(summary, job.elapsed_seconds(), output));
    } else {
      log_info("stopped on a signal after writing a checkpoint; continue with --resume auto");
    }
  }
  if (test_hooks().leave_delay_ms > 0 && job.layout.trainer_index == test_hooks().slow_trainer) {
    std::this_thread::sleep_for(std::chrono::milliseconds(test_hooks().leave_delay_ms));
  }
  return 0;
}

}  // namespace pstrain::train
