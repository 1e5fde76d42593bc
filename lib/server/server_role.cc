#include "server/server_role.h"

#include "checkpoint/table_rows.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/log.h"
#include "exchange/step_protocol.h"
#include "optim/row_optimizer.h"
#include "ps/server.h"
#include "run_common/decay_mask.h"
#include "run_common/keyed_checkpoint.h"
#include "server/server_start.h"

namespace pstrain::server {

namespace {

// The server's side of a run with common steps: it walks the run's schedule (run_common/run_schedule.h) meeting by
// meeting (after every step, or where the mode's cadence says: exchange/meeting_cadence.h), meeting the trainers there
// (exchange/step_protocol.h) and joining the checkpoints it names.
bool serve_common_steps(const run_common::JobContext& job, ps::ShardServer& server, const ps::ModelPartition& plan,
                        const run_common::RunSchedule& schedule, run_common::CheckpointWriter& writer) {
  std::int64_t global_step = schedule.first_global_step();  // after the last meeting
  const auto save = [&](int pass, std::int64_t step_in_pass) {
    const ps::SliceState slice = server.export_state();
    checkpoint::TrainingState state;
    state.pass = pass;
    state.step_in_pass = step_in_pass;
    state.global_step = global_step;
    state.seed = job.config.seed;
    writer.save(plan, &slice, {}, state);
  };
  for (int pass = schedule.first_pass(); pass < schedule.passes(); ++pass) {
    const std::int64_t steps = schedule.common_steps(pass);
    const std::int64_t pass_start = global_step;  // the global step before this run's first step of the pass
    int flags = 0;
    for (std::int64_t step = schedule.next_meeting(0, steps); step < steps;
         step = schedule.next_meeting(step + 1, steps)) {
      global_step = pass_start + step + 1;
      flags = server.sync_step(writer.local_flags(), global_step);
      const run_common::AfterStep next = schedule.after_common_step(step, steps, global_step, flags);
      if (next != run_common::AfterStep::kGoOn) save(pass, schedule.steps_before(pass) + step + 1);
      if (next == run_common::AfterStep::kCheckpointAndStop) return false;
    }
    save(pass + 1, 0);
    if (const std::optional<bool> stop = schedule.stop_after_pass(pass, flags)) return *stop;
  }
  return true;
}

// This shard's rows of every row table, each with its row optimizer (rows zero until started or resumed).
std::vector<std::unique_ptr<ps::TableShard>> table_shards(const run_common::JobContext& job, ps::TableWindows& windows,
                                                          const ps::TablePlan& tables) {
  std::vector<std::unique_ptr<ps::TableShard>> shards;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const std::size_t rows = tables.rows(t).rows_on(job.layout.shard_index);
    const std::size_t width = tables.table(t).width;
    // Where the trainers run the optimizer themselves (--mode geo), the rows take their changes as they are.
    auto optimizer = job.mode().trainers_step_alone ? optim::make_row_change_adder(rows, width)
                                                    : optim::make_row_optimizer(job.updates.optimizer, rows, width);
    shards.push_back(std::make_unique<ps::TableShard>(windows, tables, t, job.layout, std::move(optimizer)));
    log_info("serving rows of table ", tables.table(t).name, ": ", rows, " of ", tables.rows(t).rows(), " x ",
             tables.table(t).width);
  }
  return shards;
}

// This shard's rows of every table from the checkpoint being resumed, read in place and re-dealt when it was
// written with another number of servers (checkpoint/table_rows.h).
void resume_table_rows(const run_common::JobContext& job, const std::vector<std::unique_ptr<ps::TableShard>>& shards,
                       const run_common::RunState& run) {
  for (std::size_t t = 0; t < shards.size(); ++t) {
    const ps::TableSpec& table = job.tables.table(t);
    if (table.exact_keys()) {
      shards[t]->restore_keyed(run_common::keyed_rows_to_resume(run.resumed_from, table, job.layout.shard_index,
                                                                job.layout.pservers, shards[t]->state_names()),
                               run.resumed->model.optimizer_steps);
      continue;
    }
    shards[t]->load_rows(
        [&](std::span<float> rows, const std::vector<std::pair<std::string, std::span<float>>>& state) {
          checkpoint::read_table_rows(run.resumed_from, {table.name, table.rows, table.width}, job.layout.shard_index,
                                      job.layout.pservers, rows, state);
        },
        run.resumed->model.optimizer_steps);
  }
}

// What the shard applies to its slice: the configured optimizer to the trainers' summed gradients, or, where the
// trainers run the optimizer themselves (modes/traits.h trainers_step_alone), their summed changes as they
// are.
std::unique_ptr<optim::Optimizer> shard_optimizer(const run_common::JobContext& job,
                                                  const std::vector<nn::ParameterInfo>& parameters,
                                                  const ps::ShardPlan& plan) {
  const int shard = job.layout.shard_index;
  if (job.mode().trainers_step_alone) return optim::make_change_adder(plan.shard_size(shard));
  return optim::make_optimizer(job.updates.optimizer, plan.shard_size(shard),
                               run_common::decay_mask(job.updates.optimizer, parameters, plan, shard));
}

}  // namespace

bool run_server(const run_common::JobContext& job, ps::PsWindows& windows, ps::TableWindows& table_windows,
                ps::SyncTransport transport, MPI_Comm channel, const ps::ModelPartition& partition,
                run_common::RunState& run, const std::vector<nn::ParameterInfo>& parameters) {
  const int shard = job.layout.shard_index;
  const ps::ShardPlan& plan = partition.blocks();
  auto tables = table_shards(job, table_windows, partition.tables());
  // The starting values, unless the checkpoint being resumed replaces them.
  const std::vector<float> start =
      run.resumed ? std::vector<float>(plan.shard_size(shard), 0.0f) : fill_server_start(job, partition, tables);
  if (run.resumed) resume_table_rows(job, tables, run);
  ps::ShardServer server(windows, plan, job.layout, transport, channel, shard_optimizer(job, parameters, plan), start);
  server.serve_tables(std::move(tables));
  if (run.resumed) {
    const checkpoint::ModelState& model = run.resumed->model;
    server.import_state(partition, model.parameters, model.optimizer_state, model.optimizer_steps);
  }
  log_info("serving ", plan.shard_size(job.layout.shard_index), " of ", plan.total_size(), " parameters in ",
           plan.segments(job.layout.shard_index).size(), " segments");
  exchange::meet_all_ranks("the start (waiting for the trainers)");  // every slice initialised
  bool completed = true;
  if (job.mode().server_loop == modes::ServerLoop::kCommonSteps) {
    completed = serve_common_steps(job, server, partition, *run.schedule, *run.writer);
  } else {
    // Async: serve until done, joining each checkpoint the trainers quiesce for (exchange/step_protocol.h).
    while (server.serve_async(std::chrono::microseconds(job.config.poll_interval_us)) ==
           ps::ShardServer::AsyncOutcome::kCheckpoint) {
      const ps::SliceState slice = server.export_state();
      run.writer->save(partition, &slice, {}, {});
      const std::int64_t request =
          exchange::end_async_checkpoint(server.checkpoint_request(), [&server] { server.clear_checkpoint_request(); });
      if (exchange::stops_after_checkpoint(request)) {
        completed = false;
        break;
      }
    }
  }
  log_info(completed ? "done: " : "stopped after a checkpoint: ", server.stats().updates, " updates, ",
           server.stats().busy_seconds, " s busy");
  return completed;
}

}  // namespace pstrain::server
