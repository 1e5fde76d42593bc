#include "job/job.h"

#include <algorithm>
#include <iostream>
#include <optional>

#include "checkpoint/checkpoint.h"
#include "comm/communicator.h"
#include "comm/environment.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/files.h"
#include "core/log.h"
#include "core/stop_signals.h"
#include "exchange/step_protocol.h"
#include "job/exchange_factory.h"
#include "job/job_start.h"
#include "job/memory_check.h"
#include "job/overlap_plan.h"
#include "job/run_folder.h"
#include "ps/control_client.h"
#include "ps/data_client.h"
#include "ps/server.h"
#include "ps/shard_plan.h"
#include "ps/table_client.h"
#include "report/run_summary.h"
#include "run_common/checkpointing.h"
#include "run_common/model_factory.h"
#include "run_common/run_schedule.h"
#include "run_common/run_state.h"
#include "run_common/table_layout.h"
#include "server/server_role.h"
#include "server/server_start.h"
#include "trainer/trainer_loop.h"

namespace pstrain::job {

namespace {

namespace fs = std::filesystem;

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
bool run_distributed(const run_common::JobContext& job, compute::Backend& backend, nn::Model* model,
                     run_common::RunState& run) {
  const comm::Communicator trainers =
      comm::Communicator::split(MPI_COMM_WORLD, job.layout.is_trainer() ? 0 : MPI_UNDEFINED, job.layout.world_rank);
  const ps::TablePlan& tables = job.tables;
  const ps::ShardPlan plan = run_common::server_blocks(job);
  const ps::ModelPartition partition(plan, tables);
  ps::PsWindows windows(MPI_COMM_WORLD, job.layout, plan);
  const OverlapPlan overlap = plan_overlap(job.config, job.layout);
  const comm::Communicator channel = comm::Communicator::duplicate(MPI_COMM_WORLD);  // streamed sync steps
  ps::TableWindows table_windows(MPI_COMM_WORLD, job.layout, tables);
  bool completed = true;
  if (job.layout.is_server()) {
    completed = server::run_server(job, windows, table_windows, overlap.sync, channel.handle(), partition, run,
                                   job.model.parameters);
  } else {
    // The trainer's flat vector is the dense layout, then its row caches (run_common/table_layout.h): the same blocks
    // dealt the same way, at their offsets in that layout.
    std::vector<std::size_t> dense_sizes;
    for (const nn::ParameterInfo& parameter : job.dense_parameters) dense_sizes.push_back(parameter.size);
    const ps::ShardPlan dense_blocks(dense_sizes, job.layout.pservers, job.config.block_size);
    for (int shard = 0; shard < plan.shards(); ++shard) {
      PSTRAIN_ASSERT(dense_blocks.shard_size(shard) == plan.shard_size(shard), "shard ", shard, " holds ",
                     plan.shard_size(shard), " floats, the dense layout deals it ", dense_blocks.shard_size(shard));
    }
    ps::DataClient client(windows, dense_blocks, job.layout);
    ps::ControlClient control(windows, job.layout);
    ps::TableClient table_client(table_windows, tables,
                                 run_common::row_caches(job, run_common::largest_batch(job.config, job.model)),
                                 job.layout);
    if (job.layout.is_lead_trainer()) {
      for (std::size_t t = 0; t < tables.size(); ++t) {
        const ps::TableSpec& table = tables.table(t);
        const std::string keys =
            table.exact_keys() ? cat(", keyed by the raw id, at most ", table.rows, " rows held") : std::string();
        log_info("table ", table.name, " (", table.rows, " x ", table.width, keys,
                 ") is held by rows on the servers: a step fetches and updates only the rows its batch looks up");
      }
    }
    exchange::meet_all_ranks("the start (waiting for the servers)");  // every slice initialised
    auto gradient_exchange =
        make_exchange(job, {backend, *model, trainers.handle(), &client, run, tables.empty() ? nullptr : &table_client,
                            overlap, &dense_blocks, channel.handle(), &control});
    trainer::DataDispatch dispatch;
    if (job.config.dynamic_dispatch) {
      dispatch.take_chunk = [&control] {
        const comm::Watchdog::Wait wait("taking a chunk of samples from the dispatcher on server 0");
        return control.take_chunk();
      };
      dispatch.reset = [&control] { control.reset_chunks(); };
    }
    completed = trainer::run_trainer(job, backend, *model, *gradient_exchange, trainers.handle(), run.samples,
                                     {run.test, run.valid, run.training_click_rate}, *run.schedule,
                                     {run.writer.get(), &partition, !job.mode().common_steps}, dispatch);
    if (!tables.empty()) log_table_traffic(table_client.traffic(), plan);
  }
  exchange::meet_all_ranks("the end of training");  // nobody frees windows while another rank still uses them
  return completed;
}

bool run_local(const run_common::JobContext& job, compute::Backend& backend, nn::Model& model,
               run_common::RunState& run) {
  auto gradient_exchange = make_exchange(job, {backend, model, MPI_COMM_SELF, nullptr, run});
  const ps::ShardPlan whole(run_common::parameter_sizes(job.model), 1, job.model.parameter_count);
  const ps::TablePlan no_tables;
  const ps::ModelPartition partition(whole, no_tables);
  return trainer::run_trainer(job, backend, model, *gradient_exchange, MPI_COMM_SELF, run.samples,
                              {run.test, run.valid, run.training_click_rate}, *run.schedule,
                              {run.writer.get(), &partition});
}

// Every rank a trainer with the whole model; world rank 0 contributes the model state to checkpoints.
bool run_allreduce(const run_common::JobContext& job, compute::Backend& backend, nn::Model& model,
                   run_common::RunState& run) {
  ExchangeParts parts{backend, model, MPI_COMM_WORLD, nullptr, run};
  parts.overlap = plan_overlap(job.config, job.layout);
  auto gradient_exchange = make_exchange(job, parts);
  const ps::ShardPlan whole(run_common::parameter_sizes(job.model), 1, job.model.parameter_count);
  const ps::TablePlan no_tables;
  const ps::ModelPartition partition(whole, no_tables);
  const bool completed = trainer::run_trainer(job, backend, model, *gradient_exchange, MPI_COMM_WORLD, run.samples,
                                              {run.test, run.valid, run.training_click_rate}, *run.schedule,
                                              {run.writer.get(), &partition});
  exchange::meet_all_ranks("the end of training");
  return completed;
}

// The one line an error during training leaves, in the form of every other error that ends pstrain ("pstrain:
// error: ...", which scripts and tests look for), with the rank that met it; then every rank ends with `code`.
[[noreturn]] void end_job_on_error(int rank, ExitCode code, const std::string& message) {
  std::cerr << "pstrain: error: rank " << rank << ": " << message << std::endl;
  comm::MpiEnvironment::abort_job(static_cast<int>(code));
}

// The last lines: this rank's peak memory; on the lead trainer, the best and final test metric, the total time and
// where the outputs are (or how to continue a stopped run).
void log_end(const run_common::JobContext& job, bool completed) {
  log_info("peak resident memory of this rank: ", static_cast<long long>(peak_resident_bytes() / (1024.0 * 1024.0)),
           " MiB");
  if (!job.layout.is_lead_trainer()) return;
  if (completed) {
    const fs::path& output = job.config.output_dir;
    log_info(report::summary_line(report::summarize_metrics(output / "metrics.jsonl"), job.elapsed_seconds(), output));
  } else {
    log_info("stopped on a signal after writing a checkpoint; continue with --resume auto");
  }
}

}  // namespace

int run_job(int argc, char** argv) {
  return run_job(argc, argv, run_common::RunHooks::none());
}

int run_job(int argc, char** argv, run_common::RunHooks& hooks) {
  // Before MPI starts its threads; a stop asked for during the start is carried out at the first step boundary.
  const StopSignalListener stop_signals;
  comm::MpiEnvironment mpi(argc, argv);
  const int rank = mpi.world_rank();
  Logger::instance().set_identity(cat("rank ", rank));
  Logger::instance().set_console(rank == 0);
  // Collective, so outside any step that can fail on one rank only.
  const comm::Communicator node = comm::Communicator::split_shared(MPI_COMM_WORLD);
  JobStart start;
  start.job.hooks = &hooks;
  if (const std::optional<int> code = start_job(start, rank, mpi.world_size(), node, argc, argv)) return *code;
  const run_common::JobContext& job = start.job;

  // Training. From here a failure on one rank cannot be agreed on (others may be inside a barrier or an RMA
  // epoch), so it ends the whole job, unless every rank already agreed on it (a failed checkpoint).
  bool completed = true;
  try {
    if (job.layout.world_size == 1) {
      completed = run_local(job, *start.backend, *start.model, start.run);
    } else if (!job.mode().has_servers) {
      completed = run_allreduce(job, *start.backend, *start.model, start.run);
    } else {
      completed = run_distributed(job, *start.backend, start.model.get(), start.run);
    }
  } catch (const AgreedFailure& failure_everywhere) {
    return static_cast<int>(failure_everywhere.code());
  } catch (const Error& error) {
    end_job_on_error(rank, error.code(), error.what());
  } catch (const std::exception& error) {
    end_job_on_error(rank, ExitCode::kInternal, cat("internal error: ", error.what()));
  }
  // The watchdog stays up through MPI_Finalize (comm::MpiEnvironment's destructor stops it).
  log_end(job, completed);
  job.hooks->before_leaving(job.layout.trainer_index);
  return 0;
}

}  // namespace pstrain::job
