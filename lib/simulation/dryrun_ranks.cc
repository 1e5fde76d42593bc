#include "simulation/dryrun_ranks.h"

#include <mpi.h>

#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/mpi_check.h"
#include "compute/backend.h"
#include "core/bulk_vector.h"
#include "core/error.h"
#include "exchange/step_protocol.h"
#include "modes/builders.h"
#include "optim/optimizer.h"
#include "optim/row_optimizer.h"
#include "ps/model_tables.h"
#include "ps/server.h"
#include "ps/table_shard.h"
#include "simulation/simulated_compute.h"

namespace pstrain::simulation {

namespace {

constexpr double kFloat = sizeof(float);

std::unique_ptr<optim::Optimizer> make_optimizer(const DryRunJob& job, std::size_t size) {
  optim::OptimizerConfig config;
  config.kind = job.optimizer;
  return optim::make_optimizer(config, size);
}

double optimizer_state_bytes(optim::Optimizer& optimizer) {
  double bytes = 0;
  for (const auto& entry : optimizer.state()) bytes += kFloat * static_cast<double>(entry.second->size());
  return bytes;
}

// A shard's memory: its windows (ps/windows.h), the optimizer's state, and the sync sum of one step.
double server_memory(const DryRunJob& job, const comm::WorldLayout& layout, std::size_t slice, double optimizer) {
  const double slots = layout.push_slots();  // one per push group (ps/windows.h)
  const double windows = kFloat * (ps::kParamsHeader + slice) + kFloat * slots * ps::slot_stride(slice) +
                         sizeof(std::int64_t) * static_cast<double>(ps::control_size(layout.trainers));
  return windows + optimizer + kFloat * static_cast<double>(slice) + static_cast<double>(job.profile.baseline_bytes);
}

// How many batches' rows a trainer holds, as pstrain's table layout says (run_common/table_layout.cc): every batch's
// since the last meeting where the trainers step alone between meetings (geo), else its batch's.
std::size_t batches_held(const DryRunJob& job) {
  return modes::mode_traits(job.mode).trainers_step_alone ? static_cast<std::size_t>(job.steps_alone) : 1;
}

// The profile's row table as pstrain's servers hold it (ps/table_plan.h): none without one.
ps::TablePlan table_plan(const DryRunJob& job, int servers) {
  std::vector<ps::TableSpec> specs;
  for (const ProfiledTable& table : job.profile.tables) {
    specs.push_back({table.parameter, job.profile.parameter_offset(table.parameter), table.rows, table.width,
                     table.ids_per_sample});
  }
  return specs.empty() ? ps::TablePlan()
                       : ps::TablePlan(std::move(specs), servers, job.profile.batch * batches_held(job));
}

std::vector<bool> held_by_rows(const DryRunJob& job, const ps::TablePlan& tables) {
  std::vector<bool> marks;
  for (const ProfiledParameter& parameter : job.profile.parameters) {
    bool by_rows = false;
    for (std::size_t t = 0; t < tables.size(); ++t) by_rows = by_rows || tables.table(t).name == parameter.name;
    marks.push_back(by_rows);
  }
  return marks;
}

// This shard's rows of each table with their row optimizer (as lib/server's table_shards), and their memory:
// the rows, the trainers' row-id and row-gradient slots (ps/table_windows.h), the optimizer's state.
double serve_tables(const DryRunJob& job, const comm::WorldLayout& layout, ps::TableWindows& windows,
                    const ps::TablePlan& tables, ps::ShardServer& server) {
  std::vector<std::unique_ptr<ps::TableShard>> shards;
  double bytes = 0;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const auto rows = static_cast<double>(tables.rows(t).rows_on(layout.shard_index));
    const auto width = static_cast<double>(tables.table(t).width);
    const auto capacity = static_cast<double>(tables.capacity(t, layout.shard_index));
    optim::OptimizerConfig config;
    config.kind = job.optimizer;
    const std::uint64_t held = tables.rows(t).rows_on(layout.shard_index);
    auto optimizer = modes::mode_traits(job.mode).trainers_step_alone
                         ? optim::make_row_change_adder(held, tables.table(t).width)
                         : optim::make_row_optimizer(config, held, tables.table(t).width);
    for (const auto& entry : optimizer->state()) bytes += kFloat * static_cast<double>(entry.second->size());
    shards.push_back(std::make_unique<ps::TableShard>(windows, tables, t, layout, std::move(optimizer)));
    bytes += kFloat * rows * width + sizeof(std::int64_t) * layout.trainers * (1 + capacity) +
             kFloat * layout.trainers * capacity * width;
  }
  server.serve_tables(std::move(shards));
  return bytes;
}

RankReport serve(const DryRunJob& job, const comm::WorldLayout& layout, ps::PsWindows& windows,
                 ps::TableWindows& table_windows, const ps::ModelPartition& partition, MPI_Comm channel) {
  const ps::ShardPlan& plan = partition.blocks();
  const std::size_t slice = plan.shard_size(layout.shard_index);
  const std::vector<float> start(slice, 0.01f);
  const modes::ModeTraits& mode = modes::mode_traits(job.mode);
  // As pstrain's servers: where the trainers run the optimizer themselves, the servers add their changes.
  auto optimizer = mode.trainers_step_alone ? optim::make_change_adder(slice) : make_optimizer(job, slice);
  const double optimizer_bytes = optimizer_state_bytes(*optimizer);
  ps::ShardServer server(windows, plan, layout, ps::SyncTransport::kOneSided, channel, std::move(optimizer), start);
  const double table_bytes = serve_tables(job, layout, table_windows, partition.tables(), server);
  exchange::meet_all_ranks("the start");
  RankReport report;
  report.is_server = 1;
  const bool meetings = mode.server_loop == modes::ServerLoop::kCommonSteps;
  // The meetings of the warm-up steps, then those of the timed ones (the trainers' steps are one pass).
  const exchange::MeetingCadence cadence = modes::meeting_cadence(job.mode, job.steps_alone);
  const std::int64_t steps = job.warmup_steps + job.steps;
  std::int64_t step = cadence.next_meeting(0, steps);
  for (; meetings && step < job.warmup_steps; step = cadence.next_meeting(step + 1, steps))
    server.sync_step(0, step + 1);
  const ps::ServerStats warm = server.stats();
  const double begin = MPI_Wtime();
  double timed_meetings = 0;
  if (meetings) {
    for (; step < steps; step = cadence.next_meeting(step + 1, steps), ++timed_meetings) server.sync_step(0, step + 1);
  } else {
    server.serve_async(job.poll_interval);  // the trainers' warm-up steps too: it cannot tell them apart
  }
  report.train_seconds = MPI_Wtime() - begin;
  report.updates = static_cast<double>(server.stats().updates - warm.updates);
  report.busy_seconds = server.stats().busy_seconds - warm.busy_seconds;
  if (!meetings) {  // every shard applies every push once: the warm-up's are one per trainer and step
    const double all = report.updates;
    report.updates -= static_cast<double>(layout.trainers * job.warmup_steps);
    report.busy_seconds *= all > 0 ? report.updates / all : 0;  // its busy time in proportion
  }
  // Dense traffic only (the control words' 8-byte atomics are left out): every slot once per meeting (sync: one
  // per push group) or per applied push (async), and one pull of the slice per meeting (sync: per push group) or
  // trainer step, in the timed steps (async: and the end-of-pass pull; the first pulls came before the warm-up).
  const double trainers = layout.trainers;
  const double slots = layout.push_slots();
  const double timed_steps = static_cast<double>(job.steps);
  const double pushes = meetings ? slots * timed_meetings : report.updates;
  const double pulls = meetings ? slots * timed_meetings : trainers * (timed_steps + 1);
  report.bytes_in = pushes * kFloat * static_cast<double>(ps::slot_stride(slice));
  report.bytes_out = pulls * kFloat * static_cast<double>(ps::kParamsHeader + slice);
  report.memory_bytes = server_memory(job, layout, slice, optimizer_bytes) + table_bytes;
  report.push_slots = slots;
  return report;
}

// What every mode's builder is given in the dry-run (modes/mode_inputs.h): as pstrain fills it, with the
// dry-run's flags; the whole-model modes start from `parameters` with a fresh optimizer.
modes::ModeInputs dry_run_inputs(const DryRunJob& job, const comm::WorldLayout& layout, MPI_Comm trainers,
                                 std::span<const float> parameters) {
  modes::ModeInputs in;
  in.layout = layout;
  in.trainers = trainers;
  in.stream_pushes = job.overlap;
  in.poll_interval = job.poll_interval;
  in.staleness = job.staleness;
  in.cadence = modes::meeting_cadence(job.mode, job.steps_alone);
  in.restored_optimizer = [&job, size = parameters.size()] { return make_optimizer(job, size); };
  in.trainer_optimizer = in.restored_optimizer;
  in.initial = parameters;
  in.parameter_count = parameters.size();
  return in;
}

// The features of step `step` of trainer `trainer`: one of the profile's id batches (the ids its row table looks
// up), each trainer starting at another one; empty without a table.
std::vector<float> batch_features(const JobProfile& profile, int trainer, std::int64_t step) {
  if (profile.id_batches.empty()) return {};
  const auto batches = static_cast<std::int64_t>(profile.id_batches.size());
  const std::vector<std::uint64_t>& ids = profile.id_batches[static_cast<std::size_t>((trainer + step) % batches)];
  std::vector<float> features(ids.begin(), ids.end());
  return features;
}

// One step of the trainer loop without data: the batch's table rows fetched (with a row table), compute
// (simulated), then the mode's exchange; as lib/trainer's loop orders them. Returns the compute's seconds.
double train_step(const DryRunJob& job, exchange::GradientExchange& exchange, nn::ParameterStream* stream,
                  std::span<float> parameters, std::span<const float> gradient, int trainer, std::int64_t step) {
  std::vector<float> features = batch_features(job.profile, trainer, step);
  if (exchange::RowTableAccess* rows = exchange.row_tables(); rows != nullptr && !features.empty()) {
    rows->fetch_for_batch(features, nullptr, job.profile.batch, parameters);
  }
  exchange.begin_step(job.profile.batch);
  const double compute = spend_training_step(job.profile, stream);
  int flags = 0;
  if (exchange::InPlaceCombination* combination = exchange.in_place_combination()) {
    combination->combine_in_place(job.profile.batch, flags);
  }
  exchange.step(gradient, job.profile.batch, {step, job.warmup_steps + job.steps}, parameters, flags);
  return compute;
}

// One pass: the warm-up steps, a meeting of the trainers (the timed steps start together), then `steps` timed
// steps. Collective over `trainers`.
RankReport train(const DryRunJob& job, exchange::GradientExchange& exchange, std::span<float> parameters,
                 std::span<const float> gradient, int trainer, MPI_Comm trainers) {
  RankReport report;
  exchange.start(parameters);
  exchange::ComputationOverlap* overlap = job.overlap ? exchange.overlap() : nullptr;
  nn::ParameterStream* stream = overlap != nullptr ? overlap->stream_in_place(gradient, parameters) : nullptr;
  std::int64_t step = 0;
  for (; step < job.warmup_steps; ++step) train_step(job, exchange, stream, parameters, gradient, trainer, step);
  exchange.timers() = {};
  exchange.staleness() = {};
  MPI_CHECK(MPI_Barrier(trainers));
  const double begin = MPI_Wtime();
  for (; step < job.warmup_steps + job.steps; ++step) {
    report.compute_seconds += train_step(job, exchange, stream, parameters, gradient, trainer, step);
  }
  exchange.finish_pass(parameters);
  exchange.finish();
  report.train_seconds = MPI_Wtime() - begin;
  report.samples = static_cast<double>(job.steps) * static_cast<double>(job.profile.batch);
  const exchange::ExchangeTimers& timers = exchange.timers();
  report.push_seconds = timers.push_seconds;
  report.sync_seconds = timers.sync_seconds;
  report.pull_seconds = timers.pull_seconds;
  report.gate_seconds = timers.gate_seconds;
  report.allreduce_seconds = timers.allreduce_seconds;
  report.update_seconds = timers.update_seconds;
  report.mean_staleness = exchange.staleness().mean();
  report.memory_bytes = static_cast<double>(job.profile.baseline_bytes + job.profile.trainer_bytes);
  return report;
}

// A parameter-server trainer as lib/job builds one: its flat vector is the dense layout (the tables taken out),
// then a batch's row cache per table (ps/model_tables.h); the same blocks as the servers', at those offsets.
RankReport run_ps_trainer(const DryRunJob& job, const comm::WorldLayout& layout, ps::PsWindows& windows,
                          ps::TableWindows& table_windows, const ps::ModelPartition& partition, MPI_Comm trainers) {
  const ps::TablePlan& tables = partition.tables();
  const std::size_t dense_count = partition.dense_size();
  std::vector<std::size_t> dense_sizes;
  const std::vector<bool> by_rows = held_by_rows(job, tables);
  for (std::size_t i = 0; i < job.profile.parameters.size(); ++i) {
    if (!by_rows[i]) dense_sizes.push_back(job.profile.parameters[i].size);
  }
  const ps::ShardPlan dense_blocks(dense_sizes, layout.pservers, job.block_size);
  const std::vector<ps::RowCache> caches = ps::row_caches(tables, dense_count, job.profile.batch * batches_held(job));
  std::size_t length = dense_count;
  for (std::size_t t = 0; t < caches.size(); ++t) length += caches[t].rows * tables.table(t).width;
  ps::DataClient client(windows, dense_blocks, layout);
  ps::ControlClient control(windows, layout);
  ps::TableClient table_client(table_windows, tables, caches, layout);
  // Shared by every simulated trainer (core/bulk_vector.h as the dry-run builds it): no value of them decides anything
  // that is reported, and ResNet's 26 MB each, once per trainer, was more memory than the machine has.
  BulkVector<float> parameters(length, 0.0f), gradient(length, 1e-4f);
  exchange::meet_all_ranks("the start");
  modes::ModeInputs inputs = dry_run_inputs(job, layout, trainers, std::span<const float>(parameters));
  inputs.data = &client;
  inputs.control = &control;
  inputs.tables = tables.empty() ? nullptr : &table_client;
  // As lib/job's: a trainer's own optimizer over the dense parameters, SGD over the rows it holds (geo).
  inputs.trainer_optimizer = [&job, dense_count] { return make_optimizer(job, dense_count); };
  inputs.held_rows_optimizer = [rows = length - dense_count] { return optim::make_optimizer({}, rows); };
  auto exchange = modes::make_mode_exchange(job.mode, inputs);
  RankReport report = train(job, *exchange, parameters, gradient, layout.trainer_index, trainers);
  report.table_bytes = static_cast<double>(table_client.traffic().bytes);
  if (layout.aggregates_pushes() && layout.push_groups.leader(layout.push_slot()) == layout.trainer_index) {
    report.memory_bytes += 3 * kFloat * static_cast<double>(dense_count);  // the group's sum, two receive buffers
  }
  return report;
}

RankReport run_allreduce_rank(const DryRunJob& job, const comm::WorldLayout& layout) {
  const std::size_t length = job.profile.parameter_count();
  std::vector<float> parameters(length, 0.01f), gradient(length, 1e-4f);
  auto backend = compute::make_cpu_backend();
  const double optimizer_bytes = optimizer_state_bytes(*make_optimizer(job, length));
  modes::ModeInputs inputs = dry_run_inputs(job, layout, MPI_COMM_WORLD, parameters);
  inputs.backend = backend.get();
  inputs.backend_gradient = gradient.data();
  auto exchange = modes::make_mode_exchange(job.mode, inputs);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  RankReport report = train(job, *exchange, parameters, gradient, rank, MPI_COMM_WORLD);
  report.memory_bytes += optimizer_bytes + kFloat * static_cast<double>(length);  // the state and the start copy
  exchange::meet_all_ranks("the end of training");
  return report;
}

// The push groups of --node-aggregation: the trainers of each simulated host (MPI_Comm_split_type SHARED groups
// ranks by host under SMPI). Collective over the world.
comm::PushGroups host_push_groups(const comm::WorldLayout& layout) {
  const comm::Communicator host = comm::Communicator::split_shared(MPI_COMM_WORLD);
  int host_number = layout.world_rank;
  MPI_Bcast(&host_number, 1, MPI_INT, 0, host.handle());  // the host's lowest world rank
  std::vector<int> host_of_rank(static_cast<std::size_t>(layout.world_size));
  MPI_Allgather(&host_number, 1, MPI_INT, host_of_rank.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> host_of_trainer;
  host_of_trainer.reserve(static_cast<std::size_t>(layout.trainers));
  for (int trainer = 0; trainer < layout.trainers; ++trainer) {
    host_of_trainer.push_back(host_of_rank[static_cast<std::size_t>(layout.trainer_rank(trainer))]);
  }
  return comm::PushGroups::by_node(host_of_trainer);
}

}  // namespace

RankReport run_dry_rank(const DryRunJob& job, const comm::WorldLayout& given) {
  comm::WorldLayout layout = given;
  const modes::ModeTraits& mode = modes::mode_traits(job.mode);
  if (job.node_aggregation) {
    if (!mode.has_servers || !mode.common_steps) {
      throw Error(ExitCode::kUsage, cat("--node-aggregation true: the dry-run aggregates the meetings of modes with "
                                        "common steps, not --mode ",
                                        mode.name));
    }
    layout.push_groups = host_push_groups(layout);
  }
  if (job.overlap && mode.overlap != modes::OverlapKind::kPushes) {
    // Tried: sync over the streamed transport simulated 4.6x slower than one-sided at 16 ranks (unexplained,
    // unvalidated), and all-reduce buckets tripped the replica check (SMPI's MPI_Iallreduce does not give every
    // rank the same bits). Neither is offered until it is understood.
    throw Error(ExitCode::kUsage,
                cat("--overlap true: the dry-run streams async and ssp pushes only, not ", mode.name));
  }
  if (!mode.has_servers) return run_allreduce_rank(job, layout);  // tables are dense parameters there, as in pstrain
  if (job.overlap && !job.profile.tables.empty()) {
    throw Error(ExitCode::kUsage, "--overlap true: the dry-run does not stream the pushes of a model with a row table");
  }
  const comm::Communicator trainers =
      comm::Communicator::split(MPI_COMM_WORLD, layout.is_trainer() ? 0 : MPI_UNDEFINED, layout.world_rank);
  const ps::TablePlan tables =
      table_plan(job, layout.pservers);  // as pstrain's table layout (run_common/table_layout.h)
  const ps::ShardPlan plan(job.profile.parameter_sizes(), layout.pservers, job.block_size, held_by_rows(job, tables));
  const ps::ModelPartition partition(plan, tables);
  ps::PsWindows windows(MPI_COMM_WORLD, layout, plan);
  const comm::Communicator channel = comm::Communicator::duplicate(MPI_COMM_WORLD);
  ps::TableWindows table_windows(MPI_COMM_WORLD, layout, tables);
  RankReport report;
  if (layout.is_server()) {
    report = serve(job, layout, windows, table_windows, partition, channel.handle());
  } else {
    report = run_ps_trainer(job, layout, windows, table_windows, partition, trainers.handle());
  }
  exchange::meet_all_ranks("the end of training");
  return report;
}

}  // namespace pstrain::simulation
