#include "trainer/trainer_loop.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/counter_random.h"
#include "core/error.h"
#include "core/log.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "report/event_writer.h"
#include "report/progress_line.h"
#include "run_common/model_factory.h"
#include "run_common/model_state.h"
#include "run_common/sample_ledger.h"
#include "trainer/batch_assembler.h"
#include "trainer/exchange_buffers.h"
#include "trainer/pass_figures.h"
#include "trainer/pass_report.h"

namespace pstrain::trainer {

namespace {

// A pass in progress.
struct PassState {
  int pass;
  std::int64_t steps_before;  // steps of this pass done before the checkpoint the run resumed from
  std::vector<std::uint32_t> order;
  PassBatches batches;
  Clock::time_point start;
  PassTotals totals = {};
  std::int64_t step = 0;  // steps taken in this pass
  int flags = 0;          // the last step's agreed StepFlags
  int stop_request = 0;   // async: a checkpoint joined while waiting at the end of the pass asked to stop
};

// One trainer's run: what lives across passes, and the outline of a pass and of a step.
class TrainerLoop {
 public:
  TrainerLoop(const run_common::JobContext& job, compute::Backend& backend, nn::Model& model,
              exchange::GradientExchange& exchange, MPI_Comm trainers, run_common::TrainerSamples& samples,
              const HeldOutData& held_out, const run_common::RunSchedule& schedule, const CheckpointSupport& support,
              const DataDispatch& dispatch);
  bool run();

 private:
  // A value: the run ends with it (false: stopped after a checkpoint); none: go on with the next pass.
  using Outcome = std::optional<bool>;

  void attach_stream();
  void attach_touched_rows();
  Outcome run_pass(int pass);
  PassState begin_pass(int pass);
  void train_step(PassState& state, const BatchRange& batch);
  void train_batch(PassState& state, const BatchRange& batch);
  void exchange_gradient(PassState& state, std::size_t count);
  void report_progress(const PassState& state);
  Outcome end_pass(PassState& state);
  void evaluate_and_report(const PassState& state, const PassFigures& figures, const run_common::Coverage& coverage);
  bool evaluation_due(const PassState& state) const;
  void evaluate_between_steps(const PassState& state);
  Evaluation evaluate_test(const std::string& when);
  void report_step_evaluation(const PassState& state, std::int64_t step_in_pass, const Evaluation& evaluation,
                              double seconds);
  run_common::StepPosition position(const PassState& state, std::int64_t steps_done) const {
    return {state.pass, state.steps_before + steps_done, global_step_};
  }
  bool lead() const { return job_.layout.is_lead_trainer(); }
  // The step in progress (global_step_ counts it done only after its exchange), for the step callbacks.
  run_common::StepEvent step_event() const { return {job_.layout.trainer_index, job_.layout.trainers, global_step_}; }

  const run_common::JobContext& job_;
  const config::TrainConfig& config_;
  nn::Model& model_;
  exchange::GradientExchange& exchange_;
  MPI_Comm trainers_;
  HeldOutData held_out_;
  const run_common::RunSchedule& schedule_;
  const DataDispatch& dispatch_;
  run_common::TrainerSamples& samples_;
  ExchangeBuffers buffers_;
  BatchAssembler batch_;
  std::optional<report::EventWriter> board_;  // TensorBoard: the lead trainer writes what it reports
  report::ProgressLine progress_line_{0.0};   // the lead trainer's line every --progress-every-s seconds
  run_common::SampleLedger ledger_;
  run_common::ModelStateAverage model_state_;
  TrainerCheckpoints checkpoints_;
  std::int64_t global_step_;
  exchange::TouchedRowUpdates* touched_rows_ = nullptr;  // set: each step names its touched table rows
};

TrainerLoop::TrainerLoop(const run_common::JobContext& job, compute::Backend& backend, nn::Model& model,
                         exchange::GradientExchange& exchange, MPI_Comm trainers, run_common::TrainerSamples& samples,
                         const HeldOutData& held_out, const run_common::RunSchedule& schedule,
                         const CheckpointSupport& support, const DataDispatch& dispatch)
    : job_(job),
      config_(job.config),
      model_(model),
      exchange_(exchange),
      trainers_(trainers),
      held_out_(held_out),
      schedule_(schedule),
      dispatch_(dispatch),
      samples_(samples),
      buffers_(backend, model),
      batch_(samples, job.config.batch_size, job.config.augment, job.config.seed),
      ledger_(job.config, job.layout, job.data, schedule, samples.count()),
      model_state_(model, trainers),
      checkpoints_(job.layout, job.config.seed, schedule, support, exchange, model_state_, ledger_,
                   buffers_.parameters()),
      global_step_(schedule.first_global_step()) {
  if (config_.tensorboard && lead()) {
    board_.emplace(config_.output_dir / "tensorboard");
    // Steps after this run's first are its own: what an earlier attempt wrote there (a resumed run's steps, or a
    // run that ended before its first checkpoint) goes from TensorBoard's view.
    board_->write_restart(schedule.first_global_step() + 1);
  }
  if (lead()) progress_line_ = report::ProgressLine(config_.progress_every_s);
}

bool TrainerLoop::run() {
  attach_stream();
  attach_touched_rows();
  {
    const comm::Watchdog::Wait wait("the first pull of the parameters");
    exchange_.start(buffers_.parameters());
  }
  buffers_.publish_parameters();
  for (int pass = schedule_.first_pass(); pass < schedule_.passes(); ++pass) {
    if (const Outcome outcome = run_pass(pass)) return *outcome;
  }
  exchange_.finish();
  return true;
}

// Communication behind computation where the exchange (streamed sync blocks, async pushes or all-reduce buckets, as
// job/overlap_plan.h chose) and the model allow it (nn/parameter_stream.h).
void TrainerLoop::attach_stream() {
  exchange::ComputationOverlap* overlap = exchange_.overlap();
  if (overlap == nullptr || !model_.can_stream_parameters() || model_.host_parameters().empty()) return;
  nn::ParameterStream* stream = overlap->stream_in_place(model_.host_gradients(), model_.host_parameters());
  if (stream == nullptr) return;
  model_.set_parameter_stream(stream);
  if (lead()) log_info("overlap: gradient blocks go out during the backward pass");
}

// Updates of the touched table rows only, where the exchange and the model allow it (local training of a model with
// row tables, under sgd or adagrad without weight decay): a whole step's bits without walking whole tables.
void TrainerLoop::attach_touched_rows() {
  exchange::TouchedRowUpdates* updates = exchange_.touched_row_updates();
  if (updates == nullptr || !model_.keep_table_gradients_sparse()) return;
  touched_rows_ = updates;
  if (lead()) log_info("row tables: a step updates only the rows its batch looked up");
}

TrainerLoop::Outcome TrainerLoop::run_pass(int pass) {
  PassState state = begin_pass(pass);
  // A checkpoint asked for while this trainer waits at the end of the pass (async, with checkpoints on).
  exchange::RequestedCheckpoints* requested = exchange_.requested_checkpoints();
  if (requested != nullptr && checkpoints_.asynchronous()) {
    requested->set_checkpoint_handler([this, &state] {
      state.stop_request |= checkpoints_.join_async(position(state, state.step)) & exchange::kStopAfterCheckpoint;
      return state.stop_request != 0;
    });
  }
  BatchRange batch;
  for (ChunkRange chunk; state.batches.next(state.step, batch, &chunk); ++state.step) {
    if (chunk.count > 0) samples_.hold(std::span(state.order).subspan(chunk.first, chunk.count));
    train_step(state, batch);
    // Before the step's checkpoint: a run stopped there has written the evaluation of that step.
    if (evaluation_due(state)) evaluate_between_steps(state);
    if (checkpoints_.after_step(position(state, state.step + 1), state.step, state.batches.steps(), state.flags)) {
      return false;
    }
  }
  return end_pass(state);
}

PassState TrainerLoop::begin_pass(int pass) {
  const auto start = Clock::now();
  const bool dynamic = dispatch_.take_chunk != nullptr;
  std::vector<std::uint32_t> order = ledger_.pass_order(pass, dynamic);
  const std::int64_t steps = dynamic ? -1 : schedule_.steps(job_.layout.trainer_index, pass);
  PassBatches batches(dispatch_, steps, order.size(), config_.batch_size, config_.chunk_size);
  ledger_.begin_pass(dynamic || job_.layout.trainers > 1);
  exchange_.timers() = {};
  exchange_.staleness() = {};
  exchange_.clock_lead() = {};
  exchange_.keyed_lookups() = {};
  return PassState{pass, schedule_.steps_before(pass), std::move(order), batches, start};
}

// Compute and exchange, and the program's step callbacks (run_common/run_hooks.h) after them.
void TrainerLoop::train_step(PassState& state, const BatchRange& batch) {
  // Waits for streamed parameters happen inside the computation; they count as pulling, not computing.
  const double pulling_before = exchange_.timers().pull_seconds;
  const auto step_start = Clock::now();
  if (batch.count > 0) {
    train_batch(state, batch);
  } else {
    exchange_.begin_step(0);
  }
  state.totals.compute_seconds += seconds_since(step_start) - (exchange_.timers().pull_seconds - pulling_before);
  exchange_gradient(state, batch.count);
  const run_common::StepEvent step = step_event();
  job_.hooks->step_computed(step, seconds_since(step_start));
  ++global_step_;
  report_progress(state);
  job_.hooks->step_reported(step);
}

void TrainerLoop::train_batch(PassState& state, const BatchRange& batch) {
  const std::size_t n = batch.count;
  const int trainer = job_.layout.trainer_index;
  batch_.assemble(state.order, batch.first, n, ledger_.sample_ids(), state.pass);
  exchange::RowTableAccess* rows = exchange_.row_tables();
  if (rows != nullptr && rows->fetch_for_batch(batch_.features(n), batch_.categorical(), n, buffers_.parameters())) {
    state.totals.copy_seconds += buffers_.publish_parameters();  // the rows it reads
    model_.set_cached_lookups(&rows->cached_lookups());
  }
  exchange_.begin_step(n);  // the last MPI call before the computation (a streamed step's count goes out here)
  // Random layers (dropout) draw from (seed, global step, trainer): a resumed step draws what it drew before.
  model_.set_step_key(pstrain::combine_key(pstrain::combine_key(config_.seed, static_cast<std::uint64_t>(global_step_)),
                                           static_cast<std::uint64_t>(trainer)));
  model_.set_categorical(batch_.categorical());
  const nn::BatchResult result = model_.train_batch(batch_.features(n), batch_.labels(n), n);
  if (!std::isfinite(result.loss_sum)) {
    throw Error(ExitCode::kDiverged,
                cat("training diverged: the loss became ", result.loss_sum, " at pass ", state.pass, " step ",
                    state.step, " on trainer ", trainer, " (lower --lr, or check the data)"));
  }
  state.totals.loss_sum += result.loss_sum;
  state.totals.correct += static_cast<double>(result.correct);
  state.totals.samples += static_cast<double>(n);
  ledger_.record(state.order, batch.first, n);
}

// The gradient out, the next parameters in; the step's flags agreed where the mode has a common step.
void TrainerLoop::exchange_gradient(PassState& state, std::size_t count) {
  state.flags = checkpoints_.local_flags();
  exchange::InPlaceCombination* combination = exchange_.in_place_combination();
  const bool combined = combination != nullptr && combination->combine_in_place(count, state.flags);  // all-reduce
  const bool has_gradient = count > 0 || combined;
  if (has_gradient) state.totals.copy_seconds += buffers_.fetch_gradient();
  const std::span<const float> gradient = has_gradient ? buffers_.gradient() : buffers_.no_gradient();
  if (touched_rows_ != nullptr && count > 0) touched_rows_->rows_touched(model_.touched_rows());
  exchange_.step(gradient, count, {state.step, state.batches.steps()}, buffers_.parameters(), state.flags);
  job_.hooks->parameters_received(step_event(), buffers_.parameters());
  state.totals.copy_seconds += buffers_.publish_parameters();
}

void TrainerLoop::report_progress(const PassState& state) {
  if (global_step_ == schedule_.first_global_step() + 1 && lead()) {
    log_info("first step done ", job_.elapsed_seconds(), " s after start",
             schedule_.first_global_step() > 0 ? " (resumed)" : "");
  }
  const std::int64_t done = state.step + 1;
  if (const auto line = progress_line_.after_step({state.pass, config_.passes, done, state.batches.steps(),
                                                   state.totals.samples, seconds_since(state.start)})) {
    log_info(*line);
  }
  // Counted from the start of the pass, steps before a resume included: a resumed run reports at the steps the
  // uninterrupted run did, so its curves continue the earlier ones point for point.
  const std::int64_t done_in_pass = state.steps_before + done;
  if (config_.log_every_steps > 0 && done_in_pass % static_cast<std::int64_t>(config_.log_every_steps) == 0) {
    report_step(job_, state.pass, done, state.batches.steps(), state.totals, state.start, exchange_, global_step_,
                board_ ? &*board_ : nullptr);
  }
}

// The end of a pass: every trainer holds the same parameters and state, the trainers agree on the figures, the
// lead evaluates and reports, then the end-of-pass checkpoint.
TrainerLoop::Outcome TrainerLoop::end_pass(PassState& state) {
  {
    const comm::Watchdog::Wait wait("the end-of-pass pull of the parameters");  // async: the meeting inside
    exchange_.finish_pass(buffers_.parameters());
  }
  // A stop joined in the async meeting ends the run here, before any collective of the trainers: the trainer
  // that asked for it ended at its step boundary and takes no part in them (the checkpoint averaged the state).
  if (state.stop_request) return false;
  buffers_.publish_parameters();
  model_state_.average();
  if (state.batches.dynamic()) {  // every trainer is past its last ticket (finish_pass ends with a barrier)
    const comm::Watchdog::Wait wait("the end-of-pass reset of the sample dispatcher");
    if (lead()) dispatch_.reset();
    exchange::dispatcher_rewound(trainers_);
  }
  const double pass_seconds = seconds_since(state.start);
  if (const std::string gpu_steps = model_.take_step_breakdown(); !gpu_steps.empty() && lead()) log_info(gpu_steps);
  const run_common::Coverage coverage = [&] {
    const comm::Watchdog::Wait wait("gathering which samples the trainers trained");
    return ledger_.gather_coverage(state.pass, state.batches.chunks_taken(), trainers_);
  }();
  const PassFigures figures = agree_on_pass(state.totals, pass_seconds, state.step, exchange_, trainers_);
  if (lead()) evaluate_and_report(state, figures, coverage);
  checkpoints_.request_end_of_pass(global_step_);  // async: before the meeting, so everyone sees it
  {
    const comm::Watchdog::Wait waiting_for_lead("the end of the pass (the lead trainer evaluates)");
    exchange::lead_done_with_pass(trainers_);  // nobody starts the next pass's clock while the lead writes
  }
  ledger_.clear_consumed();
  const int flags = checkpoints_.after_pass({state.pass + 1, 0, global_step_}, state.flags);
  return schedule_.stop_after_pass(state.pass, flags);
}

// Every --eval-every-steps global steps, where the trainers hold the same parameters: after a step that ends in a
// meeting (geo: every --geo-steps; the flag is a multiple of it), never the pass's last (end_pass evaluates it).
// Every trainer decides alike from the schedule.
bool TrainerLoop::evaluation_due(const PassState& state) const {
  const std::int64_t every = config_.eval_every_steps;
  const std::int64_t steps = state.batches.steps();
  if (every <= 0 || global_step_ % every != 0 || steps < 0 || state.step + 1 >= steps) return false;
  return schedule_.meets_after(state.step, steps);
}

// Every trainer: the step's parameters whole and the model state averaged (what a checkpoint does, so a resumed
// run holds what this one did); the lead evaluates while the others wait for it.
void TrainerLoop::evaluate_between_steps(const PassState& state) {
  exchange_.settle_parameters();
  model_state_.average();
  if (lead()) {
    const auto start = Clock::now();
    buffers_.publish_parameters();
    const Evaluation evaluation = evaluate_test(cat("at step ", global_step_));
    report_step_evaluation(state, state.steps_before + state.step + 1, evaluation, seconds_since(start));
  }
  const comm::Watchdog::Wait waiting_for_lead("the lead trainer's evaluation between steps");
  exchange::lead_done_evaluating(trainers_);
}

// The test set (and the validation set, where there is one) with the parameters the trainer holds; `when` names
// the point for the divergence message. Row tables on the servers: each batch's rows fetched into the caches.
Evaluation TrainerLoop::evaluate_test(const std::string& when) {
  exchange::RowTableAccess* rows = exchange_.row_tables();
  BeforeBatch fetch_rows;
  if (rows != nullptr) {
    fetch_rows = [this, rows](std::span<float> features, const core::JaggedIds* categorical, std::size_t count) {
      if (rows->fetch_for_evaluation(features, categorical, count, buffers_.parameters())) {
        buffers_.publish_parameters();
        model_.set_cached_lookups(&rows->cached_lookups());
      }
    };
  }
  const std::size_t batch = run_common::evaluation_batch_size(job_.config, job_.model);
  // CTR metrics where the model predicts clicks (one logit, loss=bce) on CTR data.
  const std::optional<double> click_rate =
      job_.model.loss == nn::LossKind::kBinaryCrossEntropy ? held_out_.training_click_rate : std::nullopt;
  Evaluation evaluation = evaluate(model_, *held_out_.test, batch, fetch_rows, click_rate);
  if (held_out_.valid) evaluation.valid_loss = evaluate(model_, *held_out_.valid, batch, fetch_rows).loss;
  if (!std::isfinite(evaluation.loss)) {
    throw Error(ExitCode::kDiverged,
                cat("training diverged: the test loss is ", evaluation.loss, " ", when, " (lower --lr)"));
  }
  return evaluation;
}

void TrainerLoop::report_step_evaluation(const PassState& state, std::int64_t step_in_pass,
                                         const Evaluation& evaluation, double seconds) {
  report_evaluation(job_,
                    {global_step_, state.pass, step_in_pass, state.steps_before + state.batches.steps(), evaluation,
                     seconds},
                    board_ ? &*board_ : nullptr);
}

void TrainerLoop::evaluate_and_report(const PassState& state, const PassFigures& figures,
                                      const run_common::Coverage& coverage) {
  const auto start = Clock::now();
  const Evaluation evaluation = evaluate_test(cat("after pass ", state.pass));
  const double evaluation_seconds = seconds_since(start);
  exchange::RowTableAccess* rows = exchange_.row_tables();
  write_pass_folder(job_, state.pass, buffers_.parameters(), model_state_.state(), rows, held_out_.training_click_rate);
  // The pass's last step is one of --eval-every-steps': its record carries the pass's own evaluation, written
  // before the pass record (the same figures).
  if (config_.eval_every_steps > 0 && global_step_ % config_.eval_every_steps == 0) {
    report_step_evaluation(state, state.steps_before + state.step, evaluation, evaluation_seconds);
  }
  const auto& before = schedule_.consumed_in_first_pass();
  const std::int64_t samples_before =
      state.pass == schedule_.first_pass() ? std::count(before.begin(), before.end(), 1) : 0;
  const exchange::KeyedRowCounts keyed_rows = rows != nullptr ? rows->keyed_row_counts() : exchange::KeyedRowCounts{};
  report_pass(job_, {state.pass, figures, evaluation, samples_before, coverage, global_step_, keyed_rows},
              board_ ? &*board_ : nullptr);
}

}  // namespace

bool run_trainer(const run_common::JobContext& job, compute::Backend& backend, nn::Model& model,
                 exchange::GradientExchange& exchange, MPI_Comm trainers, run_common::TrainerSamples& samples,
                 const HeldOutData& held_out, const run_common::RunSchedule& schedule,
                 const CheckpointSupport& checkpoints, const DataDispatch& dispatch) {
  TrainerLoop loop(job, backend, model, exchange, trainers, samples, held_out, schedule, checkpoints, dispatch);
  return loop.run();
}

}  // namespace pstrain::trainer
