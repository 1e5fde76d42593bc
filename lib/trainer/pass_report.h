#pragma once
// What the lead trainer reports: the test-set evaluation and the pass folder at the end of every pass, the
// metrics line and the TensorBoard scalars, and the running figures every --log-every-steps steps.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "data/shard.h"
#include "exchange/gradient_exchange.h"
#include "nn/model.h"
#include "report/ctr_metrics.h"
#include "report/event_writer.h"
#include "run_common/job_context.h"
#include "run_common/sample_ledger.h"
#include "trainer/pass_figures.h"

namespace pstrain::trainer {

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
  std::optional<double> valid_loss;       // where the data has a validation shard
  std::optional<report::CtrMetrics> ctr;  // a model with loss=bce on CTR data: AUC, logloss, NE, calibration
};

// The held-out sets the lead trainer evaluates after every pass (empty on the other trainers).
struct HeldOutData {
  const std::optional<data::Samples>& test;
  const std::optional<data::Samples>& valid;
  std::optional<double> training_click_rate;  // CTR data: normalized entropy's baseline
};

// Called with each batch's copy of the features (and its categorical fields, null for data without) before the
// model reads them: a trainer whose servers hold row tables fetches the rows the batch looks up
// (RowTableAccess::fetch_for_evaluation).
using BeforeBatch =
    std::function<void(std::span<float> features, const core::JaggedIds* categorical, std::size_t count)>;

// The model's mean loss and accuracy over `test`, in batches of `batch_size`; with `training_click_rate` (CTR
// data, a model of one logit), the CTR metrics too.
Evaluation evaluate(nn::Model& model, const data::Samples& test, std::size_t batch_size,
                    const BeforeBatch& before_batch = {}, std::optional<double> training_click_rate = {});

// OUTPUT/pass-NNNNN/parameters.h5: the parameters, and the non-trainable state after them under its own names
// ("bn1.running_mean"), so that a pass folder is the whole model. `parameters` is the trainer's flat vector; the
// row tables the servers hold (job.tables) are read from them a block of rows at a time through `tables`
// (RowTableAccess::read_table_rows; a keyed table: its held ids and their rows, RowTableAccess::held_ids).
// `training_click_rate` (CTR data) goes into model.ini, for pstrain evaluate's normalized entropy.
void write_pass_folder(const run_common::JobContext& job, int pass, std::span<const float> parameters,
                       std::span<const float> state, exchange::RowTableAccess* tables = nullptr,
                       std::optional<double> training_click_rate = {});

// The end of a pass, as the lead trainer reports it.
struct PassReport {
  int pass = 0;
  const PassFigures& figures;
  const Evaluation& evaluation;
  std::int64_t samples_before = 0;  // samples of the pass trained before the checkpoint the run resumed from
  const run_common::Coverage& coverage;
  std::int64_t global_step = 0;
  exchange::KeyedRowCounts keyed_rows = {};  // --table-keys exact: the servers' counters after the pass
};

// The log line, the metrics.jsonl line and (with a board) the pass/* scalars.
void report_pass(const run_common::JobContext& job, const PassReport& report, report::EventWriter* board);

// An evaluation of the test set every --eval-every-steps global steps: between two steps of a pass, or at a pass's
// end (the pass's own evaluation) where its last step is one of them.
struct StepEvaluation {
  std::int64_t global_step = 0;
  int pass = 0;
  std::int64_t step_in_pass = 0;  // steps of `pass` done, counting those before a resume
  std::int64_t steps = 0;         // steps of the whole pass
  const Evaluation& evaluation;
  double seconds = 0;  // the evaluation's own time
};

// The log line, the metrics.jsonl evaluation record (report/metrics.h) and (with a board) the eval/* scalars at
// the global step.
void report_evaluation(const run_common::JobContext& job, const StepEvaluation& report, report::EventWriter* board);

// This trainer's figures `steps_done` steps into the pass: the log line, and the step/* scalars with a board.
// `steps` is the pass's step count (-1: dynamic dispatch, unknown).
void report_step(const run_common::JobContext& job, int pass, std::int64_t steps_done, std::int64_t steps,
                 const PassTotals& totals, std::chrono::steady_clock::time_point pass_start,
                 exchange::GradientExchange& exchange, std::int64_t global_step, report::EventWriter* board);

}  // namespace pstrain::trainer
