#pragma once
// `pstrain evaluate --num-pservers S` on N ranks: ranks 0..S-1 hold a model's row tables (embedding tables) by
// rows, each its own rows read from the pass folder (row r on server r mod S, ps/row_plan.h), and ranks S..N-1
// evaluate, fetching before each batch the rows it looks up: an evaluator never holds a whole table. The memory
// and the fetch are the trainers' (ps/table_windows.h TableWindows, ps/table_client.h TableClient): one-sided gets
// from the servers' windows, which need no server code on the path; a server only keeps calling MPI until every
// evaluator is done (EvaluationDone), which passive-target gets over osc/pt2pt need for progress.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "comm/layout.h"
#include "inference/evaluation.h"
#include "nn/model.h"
#include "nn/model_plan.h"
#include "ps/table_client.h"
#include "ps/table_plan.h"
#include "ps/windows.h"

namespace pstrain::inference {

// The model's row tables, each held by rows on `servers` shards, for evaluators of batches of at most `batch`
// samples: tables of single ids (embedding) and tables of bags (embedding_bag, whose ids are hashed into its rows;
// `longest_bags`: per categorical field of the data, its longest bag, which bounds the rows a batch looks up;
// empty for data without fields). Throws Error(kUsage) when the model has none (nothing to serve: leave
// --num-pservers out) or when a table, or another layer, reads ids that cannot be fetched before the forward pass
// (ps/model_tables.h, the rule training follows with --table-exchange sparse).
ps::TablePlan plan_served_tables(const nn::ModelPlan& model, int servers, std::size_t batch,
                                 std::span<const std::uint64_t> longest_bags);

// What an evaluator builds instead of the saved model: each row table cut to a cache of the rows one batch can
// look up, after the other parameters (packed in order: the dense layout, as parameters.h5 names them): a
// trainer's layout (ps/model_tables.h cut_model_plan).
struct EvaluatorModel {
  nn::ModelPlan plan;
  std::vector<nn::ParameterInfo> dense;  // the parameters less the tables, packed from offset 0
  std::size_t dense_count = 0;
  std::vector<ps::RowCache> caches;  // per table, in TablePlan order
};
EvaluatorModel evaluator_model(const nn::ModelPlan& model, const ps::TablePlan& tables, std::size_t batch);

class ServedTables {
 public:
  // Collective over `world` (the tables' windows; servers are its ranks 0..S-1). `caches`: the evaluators' row
  // caches (empty on servers).
  ServedTables(MPI_Comm world, const comm::WorldLayout& layout, const ps::TablePlan& tables,
               std::vector<ps::RowCache> caches);
  ServedTables(const ServedTables&) = delete;
  ServedTables& operator=(const ServedTables&) = delete;

  // Server: its rows of every table from the pass folder's parameters.h5, into its windows. Throws
  // Error(kInputData) naming the file for a missing table or one of another shape.
  void load_rows(const std::filesystem::path& pass_dir, int shard);
  // Evaluator: what sum_evaluation runs before each batch: the batch's rows fetched into the caches of the
  // model's flat parameters (host memory: the CPU backend), its ids rewritten as their places there. `model`
  // outlives the callback.
  BeforeBatch fetch_rows(nn::Model& model);

 private:
  const ps::TablePlan& tables_;
  comm::WorldLayout layout_;
  ps::TableWindows windows_;
  std::unique_ptr<ps::TableClient> client_;  // evaluators only
};

// The end of an evaluation with servers. Every rank enters it (a nonblocking barrier over `world`) once it has no
// more to do: an evaluator after its last batch waits for it; a server, which entered at once, keeps testing it,
// so that MPI progresses the evaluators' gets meanwhile, and yields the processor between tests.
class EvaluationDone {
 public:
  explicit EvaluationDone(MPI_Comm world);
  void wait_serving();    // server
  void wait_evaluated();  // evaluator

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace pstrain::inference
