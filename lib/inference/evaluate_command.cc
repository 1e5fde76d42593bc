// pstrain evaluate PASS_FOLDER: a saved model's figures on its data's test (or validation) split, without
// training: on this process, or, started by mpirun, on every rank (evaluate_on_ranks.h).
#include <optional>

#include "compute/backend.h"
#include "inference/command_line.h"
#include "inference/commands.h"
#include "inference/evaluate_on_ranks.h"
#include "inference/evaluate_request.h"
#include "inference/evaluation.h"
#include "nn/graph_model.h"

namespace pstrain::inference {

namespace {

// One process, without MPI: what `pstrain evaluate` did before it ran on ranks, unchanged.
int evaluate_here(const EvaluateRequest& request) {
  check_new_output("--output", request.output);
  const data::ShardMeta meta = data::read_shard_meta(request.data_file);
  const SavedModel saved = load_saved_model(request.pass_dir, request.choice, &meta);
  check_data_fits(saved, meta, request.data_file.string());
  note_other_data(saved, request.data_file);
  const data::Samples samples = data::read_shard(request.data_file);

  const auto backend = compute::make_cpu_backend();
  const auto model = nn::make_graph_model(*backend, saved.plan, request.batch);
  model->set_parameters(saved.parameters);
  if (!saved.state.empty()) model->set_state(saved.state);
  std::optional<KeyedLookups> keyed;
  if (!saved.keyed.empty()) keyed.emplace(saved.plan, saved.keyed);
  report_evaluation(evaluate_samples(*model, samples, request.batch, saved.info.tokens, {},
                                     saved.info.training_click_rate,
                                     place_keyed_lookups(keyed ? &*keyed : nullptr, *model)),
                    request);
  return 0;
}

}  // namespace

int run_evaluate(int argc, char** argv) {
  // Started by an MPI launcher (even as one rank): MPI, and the work shared among the ranks. Else no MPI at all.
  if (started_by_mpi_launcher()) return evaluate_on_ranks(argc, argv);
  const std::optional<EvaluateRequest> request = parse_evaluate_request(argc, argv, false);
  return request ? evaluate_here(*request) : 0;
}

}  // namespace pstrain::inference
