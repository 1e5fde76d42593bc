#include "job/job_start.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/pass_folder.h"
#include "comm/mpi_check.h"
#include "comm/node_sharing.h"
#include "comm/watchdog.h"
#include "compute/cpu/blas_kernels.h"
#include "config/resolved_ini.h"
#include "core/files.h"
#include "core/log.h"
#include "core/options.h"
#include "data/augment.h"
#include "job/default_pservers.h"
#include "job/disk_check.h"
#include "job/memory_check.h"
#include "job/node_aggregation.h"
#include "job/program_text.h"
#include "job/provenance.h"
#include "report/json_line.h"
#include "report/metrics.h"
#include "run_common/checkpointing.h"
#include "run_common/model_factory.h"
#include "run_common/run_schedule.h"
#include "run_common/table_layout.h"
#include "server/server_start.h"

extern char** environ;

namespace pstrain::job {

namespace {

namespace fs = std::filesystem;
using comm::Failure;
// A value: every rank returns it now (an agreed failure, or 0 after --help); none: the next phase follows.
using Outcome = std::optional<int>;

Outcome agreed(const std::optional<Failure>& failure) {
  if (const int code = comm::agree_on_failure(MPI_COMM_WORLD, failure)) return code;
  return std::nullopt;
}

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

// On resume, what comes after the checkpoint will be trained again: its old metrics records go (the pass records
// from the checkpoint's pass on, the evaluation records after its global step; report/metrics.h), and the pass
// folders are replaced when rewritten.
void forget_records_after(const fs::path& output_dir, const checkpoint::TrainingState& checkpoint) {
  const fs::path metrics = output_dir / "metrics.jsonl";
  std::ifstream in(metrics);
  if (!in) return;
  std::string kept;
  std::string line;
  while (std::getline(in, line)) {
    const auto record = report::parse_json_object(line);
    if (!record) {
      log_warning("dropped a line of ", metrics.string(), " that is not a JSON object (cut short by a crash?)");
    } else if (report::kept_on_resume(*record, checkpoint.pass, checkpoint.global_step)) {
      kept += line + "\n";
    }
  }
  write_file_atomically(metrics, kept);
}

// Rank 0, once every rank has agreed that training starts: the folder is claimed (created, locked for the
// run's lifetime) and only now written: the resolved flags, the provenance, and on a resume the records of what
// will be trained again go.
void write_run_records(const run_common::JobContext& job, const std::string& resolved_ini,
                       const run_common::RunState& run) {
  if (run.resumed) {
    for (const std::string& stray : checkpoint::remove_stale_temporaries(job.config.output_dir)) {
      log_warning("removed ", stray, ", an unfinished checkpoint of an earlier run");
    }
    forget_records_after(job.config.output_dir, run.resumed->training);
  }
  write_file_atomically(job.config.output_dir / "config.ini", resolved_ini);
  write_provenance(job.config, job.data, job.model, resolved_ini);
}

// Rank 0: the checkpoint this run resumes from, or "" for a fresh start (job/run_folder.h states when that is
// allowed).
std::string checkpoint_to_resume(const run_common::JobContext& job, const FolderContents& folder,
                                 const std::string& resolved_ini) {
  const run_common::CheckpointChoice choice = run_common::choose_checkpoint(job);
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

// The trainer's samples: its shards concatenated in index order. Under dynamic dispatch every shard is the
// trainer's, read a chunk at a time as it is given (run_common/trainer_samples.h); each trainer still reads the shards
// static sharding would give it once here, so that every shard's contents are checked before training starts.
run_common::TrainerSamples load_trainer_samples(const run_common::JobContext& job) {
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
    return run_common::TrainerSamples(std::move(shards), std::move(counts), job.data.meta);
  }
  data::Samples all;
  for (const std::size_t index : job.data.trainer_shards.at(trainer)) {
    data::Samples shard = data::read_shard(job.data.train_shards[index]);
    if (all.labels.empty()) all.meta = shard.meta;
    all.features.insert(all.features.end(), shard.features.begin(), shard.features.end());
    all.labels.insert(all.labels.end(), shard.labels.begin(), shard.labels.end());
    core::append_samples(all.categorical, shard.categorical);
  }
  all.meta.sample_count = all.labels.size();
  return run_common::TrainerSamples(std::move(all));
}

std::vector<float> initial_parameters(const run_common::JobContext& job) {
  if (job.config.init_from) {
    return checkpoint::read_pass_parameters(*job.config.init_from, job.model.parameters, job.model.parameter_count);
  }
  return nn::initial_parameters(job.model, job.config.seed);
}

// PSTRAIN_TEST_HOOKS asks for the test suite's faults, which only the test binary pstrain-faults injects (it turns
// the variable into run hooks and removes it before the job starts). Running without them would let a test pass
// against a binary that silently ignored its fault, so a job that still sees the variable refuses to start.
void refuse_fault_injection() {
  if (std::getenv("PSTRAIN_TEST_HOOKS") == nullptr) return;
  throw Error(ExitCode::kUsage,
              "PSTRAIN_TEST_HOOKS is set: it is the test suite's fault injection, which only the test binary "
              "pstrain-faults (built with the tests into build/bin, never installed) honours; this pstrain injects "
              "no faults, and refuses to run rather than ignore them: unset PSTRAIN_TEST_HOOKS");
}

// Phase 1: the configuration and the layout, identical on every rank.
Outcome configure(JobStart& start, int rank, int world_size, const comm::Communicator& node, int argc, char** argv) {
  run_common::JobContext& job = start.job;
  bool exit_early = false;
  // Collective, so outside attempt(): the node of every rank (its lowest world rank), for --num-pservers -1
  // (job/default_pservers.h).
  int node_number = rank;
  MPI_CHECK(MPI_Bcast(&node_number, 1, MPI_INT, 0, node.handle()));
  std::vector<int> node_of_rank(static_cast<std::size_t>(world_size));
  MPI_CHECK(MPI_Allgather(&node_number, 1, MPI_INT, node_of_rank.data(), 1, MPI_INT, MPI_COMM_WORLD));
  const auto failure = attempt([&] {
    refuse_fault_injection();
    const auto user_options = config::train_options();
    const LayeredOptions options = parse_layered_options(user_options, argc, argv, environ);
    if (options.help_requested || options.version_requested) {
      if (rank == 0) std::cout << (options.help_requested ? usage_text(user_options) : version_text());
      exit_early = true;
      return;
    }
    job.config = config::resolve_train_config(options.values);
    int pservers = job.config.num_pservers;
    if (pservers < 0 && job.mode().has_servers && world_size > 1) {
      const ServerCount chosen = default_server_count(job.config, node_of_rank);
      pservers = chosen.servers;
      start.pservers_chosen =
          cat("--num-pservers -1: ", pservers, " shard(s) for ", world_size, " ranks, ", chosen.reason);
    }
    job.layout = comm::make_layout(rank, world_size, pservers, !job.mode().has_servers);
    job.layout.local_rank = node.rank();
    job.layout.local_size = node.size();
    if (const int faked = job.hooks->ranks_per_node(); faked > 0) {  // one machine standing in for several nodes
      for (std::size_t r = 0; r < node_of_rank.size(); ++r) node_of_rank[r] = static_cast<int>(r) / faked;
    }
    job.layout.push_groups = plan_push_groups(job.config, job.layout, node_of_rank);
    optim::make_optimizer(job.config.optimizer, 0);  // validates the optimizer flags on every rank
    start.resolved_ini = config::resolved_ini(options.values, job.config);
  });
  if (const Outcome code = agreed(failure)) return code;
  if (exit_early) return 0;
  {
    const comm::Communicator node_trainers =
        comm::Communicator::split(node.handle(), job.layout.is_trainer() ? 0 : MPI_UNDEFINED, job.layout.world_rank);
    if (job.layout.is_trainer()) job.layout.local_trainer_rank = node_trainers.rank();
  }
  Logger::instance().set_identity(job.layout.describe());
  Logger::instance().set_console(job.layout.is_lead_trainer());
  return std::nullopt;
}

// Phase 2: the output folder (rank 0) and the data layout (every rank, metadata only); the model planned against
// the data, and the updates the learning-rate schedule runs over.
Outcome plan_data_and_model(JobStart& start, int rank) {
  run_common::JobContext& job = start.job;
  bool exit_early = false;
  const auto failure = attempt([&] {
    if (rank == 0 && !job.config.describe_model) {
      start.folder = inspect_run_folder(job.config.output_dir);
      check_run_folder(job.config.output_dir, !job.config.resume.empty(), job.config.init_from, start.folder);
    }
    job.data = run_common::plan_data(job.config.data_dir, job.layout.trainers, job.config.dynamic_dispatch);
    data::check_augmentable(job.config.augment, job.data.meta);  // images of a size the augmentation fits
    job.model = run_common::plan_job_model(job.config, job.data.meta);
    if (job.config.describe_model) {
      if (rank == 0) std::cout << nn::describe_model(job.model) << "\n" << job.model.spec.text;
      exit_early = true;
      return;
    }
    job.updates = run_common::plan_updates(job.config, job.layout, job.data);
  });
  if (const Outcome code = agreed(failure)) return code;
  if (exit_early) return 0;
  return std::nullopt;
}

// Phase 2b: the row tables are planned (a table that cannot go by rows is a usage error here, on every rank), the
// model fits every node (collective over each node's ranks) and its outputs the disk.
Outcome plan_tables_and_memory(run_common::JobContext& job, const comm::Communicator& node) {
  const auto failure = attempt([&] {
    job.tables = run_common::plan_row_tables(job);
    job.dense_parameters = ps::dense_layout(job.model, job.tables);
    job.dense_count = 0;
    for (const nn::ParameterInfo& parameter : job.dense_parameters) job.dense_count += parameter.size;
  });
  if (const Outcome code = agreed(failure)) return code;
  if (const Outcome code = agreed(check_node_memory(job, job.tables, node.handle()))) return code;
  return agreed(check_output_disk(job));
}

// A trainer's model, built and initialised (a pass folder given to --init-from brings its batch-norm statistics).
std::unique_ptr<nn::Model> build_model(const run_common::JobContext& job, compute::Backend& backend) {
  const std::size_t batch = run_common::largest_batch(job.config, job.model);
  auto model =
      run_common::make_model(run_common::trainer_model_plan(job, batch), batch, job.config.label_smoothing, backend);
  if (const auto kernels = model->kernel_descriptions(); !kernels.empty()) {
    std::string joined;
    for (const std::string& kernel : kernels) joined += cat(joined.empty() ? "" : "; ", kernel);
    log_info("layer kernels: ", joined);
  }
  model->initialize(job.config.seed);
  if (job.config.init_from && job.model.state_count > 0) {
    model->set_state(checkpoint::read_pass_parameters(*job.config.init_from, job.model.state, job.model.state_count));
  }
  return model;
}

// Phase 3: this rank's inputs: its backend and model, samples (trainers), test set (lead), starting parameters;
// rank 0 chooses the checkpoint to resume from.
Outcome load_inputs(JobStart& start, int rank, int cpu_threads) {
  const run_common::JobContext& job = start.job;
  run_common::RunState& run = start.run;
  return agreed(attempt([&] {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    log_info(job.layout.describe(), " on ", host, ", local rank ", job.layout.local_rank, " of ", job.layout.local_size,
             " on this node");
    start.backend = run_common::make_backend(job.config.device, job.layout, *job.hooks);
    if (job.layout.is_trainer()) {
      if (job.config.device != "cpu") log_info("compute backend: ", start.backend->name());
      compute::share_blas_threads(cpu_threads);
      log_info("CPU BLAS: ", compute::blas_kernels_description());
      start.model = build_model(job, *start.backend);
      run.samples = load_trainer_samples(job);
    }
    if (job.layout.is_lead_trainer()) {
      run.test = data::read_shard(job.data.test_shard);
      if (job.data.valid_shard) run.valid = data::read_shard(*job.data.valid_shard);
      if (job.data.meta.categorical) run.training_click_rate = run_common::training_click_rate(job.data);
    }
    if (job.layout.is_server()) {
      server::check_server_start(job);
    } else if (job.layout.pservers == 0) {
      run.initial = initial_parameters(job);
    }
    if (rank == 0 && !job.config.resume.empty()) {
      start.resume_from = checkpoint_to_resume(job, start.folder, start.resolved_ini);
    }
  }));
}

// Phase 3b: every rank reads the checkpoint rank 0 chose; the run's schedule follows from it.
Outcome read_resumed_state(JobStart& start) {
  std::string& resume_from = start.resume_from;
  int length = static_cast<int>(resume_from.size());
  MPI_CHECK(MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD));
  resume_from.resize(static_cast<std::size_t>(length));
  MPI_CHECK(MPI_Bcast(resume_from.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD));
  run_common::RunState& run = start.run;
  return agreed(attempt([&] {
    if (!resume_from.empty()) {
      run.resumed = run_common::load_checkpoint(start.job, resume_from, /*chosen=*/true);
      run.resumed_from = resume_from;
      if (start.model && !run.resumed->model.state.empty()) start.model->set_state(run.resumed->model.state);
    }
    run.schedule =
        std::make_unique<run_common::RunSchedule>(start.job.config, start.job.layout, start.job.data,
                                                  run.resumed
                                                      ? std::optional<checkpoint::TrainingState>(run.resumed->training)
                                                      : std::nullopt);
    run.writer = std::make_unique<run_common::CheckpointWriter>(start.job, start.resolved_ini);
  }));
}

// Phase 3c: training starts; only now is the output folder written (job/run_folder.h).
Outcome open_outputs(JobStart& start, int rank) {
  const run_common::JobContext& job = start.job;
  if (const Outcome code = agreed(attempt([&] {
        if (rank == 0) {
          start.claim.emplace(job.config.output_dir);
          write_run_records(job, start.resolved_ini, start.run);
        }
      }))) {
    return code;
  }
  return agreed(attempt([&] {
    const fs::path node_dir = job.config.output_dir / cat("node_", rank);
    ensure_writable_folder(node_dir);
    Logger::instance().open_file(node_dir / (job.layout.is_server() ? "server.log" : "train.log"));
  }));
}

// The lead trainer's first line: the job as it will run.
void log_start(const JobStart& start) {
  const run_common::JobContext& job = start.job;
  if (!job.layout.is_lead_trainer()) return;
  log_info("pstrain ", PSTRAIN_VERSION, ": ", job.layout.world_size, " ranks = ", job.layout.pservers,
           " parameter-server shard(s) + ", job.layout.trainers, " trainer(s), mode ",
           job.layout.world_size > 1 ? modes::to_string(job.config.mode) : std::string("local"), ", ",
           start.backend->name(), " backend, ", job.model.spec.source, " ", job.model.parameter_count, " parameters, ",
           job.data.total_train_samples(), " training samples, batch ", job.config.batch_size,
           " per trainer, learning rate per update ", job.updates.optimizer.learning_rate, " (",
           job.updates.optimizer.schedule, job.updates.optimizer.nesterov ? ", nesterov" : "", ")",
           job.config.augment.enabled() ? cat(", augment ", data::to_string(job.config.augment)) : std::string());
  if (!start.pservers_chosen.empty()) log_info(start.pservers_chosen);
  if (const auto& resumed = start.run.resumed) {
    log_info("resuming from ", start.resume_from, ": pass ", resumed->training.pass, ", step ",
             resumed->training.step_in_pass, " of it, global step ", resumed->training.global_step);
  }
}

}  // namespace

std::optional<int> start_job(JobStart& start, int world_rank, int world_size, const comm::Communicator& node, int argc,
                             char** argv) {
  if (const Outcome code = configure(start, world_rank, world_size, node, argc, argv)) return code;
  if (const Outcome code = plan_data_and_model(start, world_rank)) return code;
  if (const Outcome code = plan_tables_and_memory(start.job, node)) return code;
  // Collective over the node: each rank's share of the processors its allocation gives the node's ranks.
  const int cpu_threads = comm::cpu_threads_for_this_rank(node.handle());
  if (const Outcome code = load_inputs(start, world_rank, cpu_threads)) return code;
  if (const Outcome code = read_resumed_state(start)) return code;
  if (const Outcome code = open_outputs(start, world_rank)) return code;
  comm::Watchdog::start(world_rank, world_size, start.job.config.timeout_seconds, start.job.config.output_dir);
  log_start(start);
  return std::nullopt;
}

}  // namespace pstrain::job
