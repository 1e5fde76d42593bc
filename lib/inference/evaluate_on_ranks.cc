#include "inference/evaluate_on_ranks.h"

#include <functional>
#include <iostream>
#include <numeric>
#include <optional>
#include <vector>

#include "checkpoint/pass_folder.h"
#include "checkpoint/table_rows.h"
#include "comm/communicator.h"
#include "comm/environment.h"
#include "comm/layout.h"
#include "compute/backend.h"
#include "core/error.h"
#include "inference/command_line.h"
#include "inference/evaluate_request.h"
#include "inference/evaluation_ranks.h"
#include "inference/served_tables.h"
#include "nn/graph_model.h"

namespace pstrain::inference {

namespace {

// What one rank holds for its part.
struct RankWork {
  EvaluateRequest request;
  comm::WorldLayout layout;
  SavedModel saved;                   // a server: the plan alone; an evaluator: its parameters too
  ps::TablePlan tables;               // the served row tables (none without --num-pservers)
  std::optional<EvaluatorModel> cut;  // an evaluator's model with the served tables cut to row caches
  data::Samples samples;              // an evaluator's share
  int world_size = 1;
};

// Runs `step` and agrees on its failure with every rank of `comm`: 0, or the exit code every rank returns.
int agreed(MPI_Comm comm, const std::function<void()>& step) {
  std::optional<comm::Failure> failure;
  try {
    step();
  } catch (const Error& error) {
    failure = comm::Failure{static_cast<int>(error.code()), error.what()};
  } catch (const std::exception& error) {
    failure = comm::Failure{static_cast<int>(ExitCode::kInternal), cat("internal error: ", error.what())};
  }
  return comm::agree_on_failure(comm, failure);
}

comm::WorldLayout evaluation_layout(int rank, int size, int servers) {
  if (servers >= size) {
    throw Error(ExitCode::kUsage, cat("--num-pservers ", servers, " leaves no rank to evaluate among ", size,
                                      " ranks (need fewer servers than ranks)"));
  }
  // Without servers every rank evaluates, as the trainers of an all-reduce run.
  return comm::make_layout(rank, size, servers, servers == 0);
}

// An evaluator's parameters: all of parameters.h5, or all but the served tables, whose rows come from the
// servers into the caches after them.
void read_evaluator_parameters(RankWork& work) {
  const std::filesystem::path& pass_dir = work.request.pass_dir;
  const nn::ModelPlan& plan = work.saved.plan;
  if (work.tables.empty()) {
    work.saved.parameters = checkpoint::read_pass_parameters(pass_dir, plan.parameters, plan.parameter_count,
                                                             checkpoint::KeyedTables::kRead);
  } else {
    work.cut = evaluator_model(plan, work.tables, work.request.batch);
    work.saved.parameters = checkpoint::read_pass_parameters(pass_dir, work.cut->dense, work.cut->dense_count);
    work.saved.parameters.resize(work.cut->plan.parameter_count, 0.0f);
  }
  work.saved.state = checkpoint::read_pass_state(pass_dir, plan.state, plan.state_count);
}

// Meeting 1's work on one rank; nullopt after --help.
std::optional<RankWork> prepare(int argc, char** argv, int rank, int size) {
  const std::optional<EvaluateRequest> request = parse_evaluate_request(argc, argv, true, rank == 0);
  if (!request) return std::nullopt;
  RankWork work;
  work.request = *request;
  work.world_size = size;
  work.layout = evaluation_layout(rank, size, request->servers);
  if (rank == 0) check_new_output("--output", request->output);
  const data::ShardMeta meta = data::read_shard_meta(request->data_file);
  work.saved = load_saved_plan(request->pass_dir, request->choice, &meta);
  check_data_fits(work.saved, meta, request->data_file.string());
  if (rank == 0) note_other_data(work.saved, request->data_file);
  if (request->servers > 0 && !work.saved.keyed.empty()) {
    throw Error(ExitCode::kUsage,
                cat("--num-pservers ", request->servers, ": the tables of ", request->pass_dir.string(),
                    " are keyed by the raw id (--table-keys exact), which evaluate does not serve "
                    "from server ranks; leave --num-pservers out (every rank then holds the tables "
                    "and scores a part of the data)"));
  }
  if (request->servers > 0) {
    // A table of bags (embedding_bag) looks up, per sample, at most the test shard's longest bags of its fields.
    const std::vector<std::uint64_t> longest_bags =
        meta.categorical ? meta.categorical->max_bag : std::vector<std::uint64_t>{};
    work.tables = plan_served_tables(work.saved.plan, request->servers, request->batch, longest_bags);
  }
  if (work.layout.is_server()) {
    for (std::size_t t = 0; t < work.tables.size(); ++t) {
      const ps::TableSpec& table = work.tables.table(t);
      checkpoint::check_pass_table(request->pass_dir, {table.name, table.rows, table.width});
    }
    return work;
  }
  read_evaluator_parameters(work);
  const SampleRange share =
      evaluator_share(meta.sample_count, request->batch, work.layout.trainer_index, work.layout.trainers);
  std::vector<std::uint64_t> rows(share.count);
  std::iota(rows.begin(), rows.end(), share.first);
  work.samples = data::read_shard_rows(request->data_file, rows);
  return work;
}

// An evaluator's sums over its share.
EvaluationSums evaluate_share(const RankWork& work, ServedTables* served) {
  const auto backend = compute::make_cpu_backend();
  const auto model = nn::make_graph_model(*backend, work.cut ? work.cut->plan : work.saved.plan, work.request.batch);
  model->set_parameters(work.saved.parameters);
  if (!work.saved.state.empty()) model->set_state(work.saved.state);
  std::optional<KeyedLookups> keyed;  // no servers: the keyed tables are whole here (prepare refuses them served)
  if (!work.saved.keyed.empty()) keyed.emplace(work.saved.plan, work.saved.keyed);
  BeforeBatch before_batch = place_keyed_lookups(keyed ? &*keyed : nullptr, *model);
  if (served != nullptr) before_batch = served->fetch_rows(*model);
  return sum_evaluation(*model, work.samples, work.request.batch, work.saved.info.tokens, {}, before_batch);
}

// Meetings 2 to 4.
int evaluate_prepared(RankWork& work) {
  const MPI_Comm world = MPI_COMM_WORLD;
  const bool language_model = work.saved.info.tokens;
  std::optional<ServedTables> served;
  if (!work.tables.empty()) {
    served.emplace(world, work.layout, work.tables, work.cut ? work.cut->caches : std::vector<ps::RowCache>{});
    const int code = agreed(world, [&] {
      if (work.layout.is_server()) served->load_rows(work.request.pass_dir, work.layout.shard_index);
    });
    if (code != 0) return code;
  }
  EvaluationSums mine = no_sums(work.saved.plan.classes, language_model);
  int code = 0;
  if (work.layout.is_server()) {
    EvaluationDone(world).wait_serving();
    code = comm::agree_on_failure(world, std::nullopt);
  } else {
    std::optional<comm::Failure> failure;
    try {
      mine = evaluate_share(work, served ? &*served : nullptr);
    } catch (const Error& error) {  // e.g. an id outside the table: the others still meet
      failure = comm::Failure{static_cast<int>(error.code()), error.what()};
    }
    if (served) EvaluationDone(world).wait_evaluated();
    code = comm::agree_on_failure(world, failure);
  }
  if (code != 0) return code;
  EvaluationSums total = sum_over_ranks(world, std::move(mine));
  return agreed(world, [&] {
    if (work.layout.world_rank != 0) return;
    report_evaluation(finish_evaluation(std::move(total), work.saved.plan.classes, language_model,
                                        work.saved.info.training_click_rate),
                      work.request, EvaluationRanks{work.world_size, work.request.servers});
  });
}

}  // namespace

int evaluate_on_ranks(int argc, char** argv) {
  comm::MpiEnvironment mpi(argc, argv);
  const int rank = mpi.world_rank();
  std::optional<RankWork> work;
  bool help = false;
  if (const int code = agreed(MPI_COMM_WORLD, [&] {
        work = prepare(argc, argv, rank, mpi.world_size());
        help = !work.has_value();
      })) {
    return code;
  }
  if (help) return 0;
  try {
    return evaluate_prepared(*work);
  } catch (const std::exception& error) {
    // Past the first meeting another rank may be waiting in a collective or an epoch: end them all.
    std::cerr << "pstrain: error: rank " << rank << ": " << error.what() << std::endl;
    const auto* known = dynamic_cast<const Error*>(&error);
    comm::MpiEnvironment::abort_job(static_cast<int>(known != nullptr ? known->code() : ExitCode::kInternal));
  }
}

}  // namespace pstrain::inference
