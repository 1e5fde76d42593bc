#include "trainer/pass_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "checkpoint/pass_folder.h"
#include "checkpoint/pass_model.h"
#include "core/files.h"
#include "core/log.h"
#include "core/timing.h"
#include "data/shard.h"
#include "report/metrics.h"
#include "trainer/language_metrics.h"

namespace pstrain::trainer {

namespace {

// Per-step times are averaged over trainers and steps.
struct PerStep {
  double steps;
  double operator()(double seconds) const { return seconds / steps; }
};

void log_pass(const run_common::JobContext& job, const PassReport& report) {
  const PassTotals& totals = report.figures.sum;
  const exchange::StalenessStats& staleness = report.figures.staleness;
  const PerStep per_step{std::max(totals.steps, 1.0)};
  const double samples_per_sec = totals.samples / std::max(report.figures.pass_seconds, 1e-9);
  log_info("pass ", report.pass, ": train_loss ", totals.train_loss(), " train_accuracy ", totals.train_accuracy(),
           " test_loss ", report.evaluation.loss, " test_accuracy ", report.evaluation.accuracy,
           is_language_model(job.data)
               ? cat(" perplexity train ", std::exp(totals.train_loss()),
                     report.evaluation.valid_loss ? cat(" valid ", std::exp(*report.evaluation.valid_loss)) : "",
                     " test ", std::exp(report.evaluation.loss))
               : std::string(),
           report.evaluation.ctr ? cat(" test_auc ", report.evaluation.ctr->auc, " test_ne ", report.evaluation.ctr->ne)
                                 : std::string(),
           " samples/s ", static_cast<long long>(samples_per_sec), " elapsed ", job.elapsed_seconds(), "s",
           job.layout.pservers > 0
               ? cat(" | per step: compute ", per_step(totals.compute_seconds) * 1e3, " ms push ",
                     per_step(totals.push_seconds) * 1e3, " ms barrier ", per_step(totals.sync_seconds) * 1e3,
                     " ms pull ", per_step(totals.pull_seconds) * 1e3, " ms | staleness mean ", staleness.mean(),
                     " max ", staleness.max)
           : !job.mode().has_servers && job.layout.trainers > 1
               ? cat(" | per step: compute ", per_step(totals.compute_seconds) * 1e3, " ms all-reduce ",
                     per_step(totals.allreduce_seconds) * 1e3, " ms update ", per_step(totals.update_seconds) * 1e3,
                     " ms")
               : std::string());
}

// The run's settings and the pass's sample accounting.
void add_run_fields(report::JsonLine& line, const run_common::JobContext& job, const PassReport& report) {
  const PassTotals& totals = report.figures.sum;
  const int trainers = job.layout.trainers;
  line.add("elapsed_s", job.elapsed_seconds())
      .add("mode", job.layout.world_size == 1 ? std::string("local") : modes::to_string(job.config.mode))
      .add("device", job.config.device)
      .add("model", job.config.model)
      .add("trainers", std::int64_t{trainers})
      .add("pservers", std::int64_t{job.layout.pservers})
      .add("batch_size", static_cast<std::int64_t>(job.config.batch_size))
      .add("samples", static_cast<std::int64_t>(totals.samples))
      .add("samples_before_resume", report.samples_before)
      .add("steps_per_trainer", totals.steps / trainers);
}

// Per-step times, staleness, coverage and the ssp figures.
void add_exchange_fields(report::JsonLine& line, const run_common::JobContext& job, const PassReport& report) {
  const PassTotals& totals = report.figures.sum;
  const exchange::StalenessStats& staleness = report.figures.staleness;
  const PerStep per_step{std::max(totals.steps, 1.0)};
  const auto histogram_end =
      staleness.histogram.begin() + std::min<std::int64_t>(staleness.max + 1, exchange::StalenessStats::kBuckets);
  line.add("compute_s_per_step", per_step(totals.compute_seconds))
      .add("push_s_per_step", per_step(totals.push_seconds))
      .add("barrier_s_per_step", per_step(totals.sync_seconds))
      .add("pull_s_per_step", per_step(totals.pull_seconds))
      .add("allreduce_s_per_step", per_step(totals.allreduce_seconds))
      .add("update_s_per_step", per_step(totals.update_seconds))
      .add("copy_s_per_step", per_step(totals.copy_seconds))
      .add("staleness_mean", staleness.mean())
      .add("staleness_p50", staleness.percentile(0.5))
      .add("staleness_p95", staleness.percentile(0.95))
      .add("staleness_max", staleness.max)
      .add("samples_missing", report.coverage.missing)
      .add("samples_repeated", report.coverage.repeated)
      .add("dispatch", std::string(job.config.dynamic_dispatch ? "dynamic" : "static"))
      .add_array("chunks_per_trainer", report.coverage.chunks_per_trainer)
      .add("ssp_bound", static_cast<std::int64_t>(job.mode().bounded_staleness ? job.config.staleness : -1))
      .add("ssp_lead_mean", totals.lead_count > 0 ? totals.lead_sum / totals.lead_count : 0.0)
      .add("ssp_lead_max", report.figures.lead_max)
      .add("ssp_gate_s_per_step", per_step(totals.gate_seconds))
      .add_array("staleness_histogram", std::vector<std::int64_t>(staleness.histogram.begin(), histogram_end));
}

// --table-keys exact: the rows the servers hold now, what they admitted, evicted and refused since the run began,
// and this pass's lookups and those that fell on a default row.
void add_keyed_fields(report::JsonLine& line, const PassReport& report) {
  const PassTotals& totals = report.figures.sum;
  line.add("keyed_rows_held", report.keyed_rows.held)
      .add("keyed_rows_admitted", report.keyed_rows.admitted)
      .add("keyed_rows_evicted", report.keyed_rows.evicted)
      .add("keyed_ids_refused", report.keyed_rows.refused)
      .add("keyed_gradients_dropped", report.keyed_rows.dropped)
      .add("keyed_lookups", static_cast<std::int64_t>(totals.keyed_lookups))
      .add("keyed_default_lookups", static_cast<std::int64_t>(totals.default_row_lookups))
      .add("keyed_resolve_s_per_step", PerStep{std::max(totals.steps, 1.0)}(totals.keyed_resolve_seconds));
}

void append_metrics_line(const run_common::JobContext& job, const PassReport& report) {
  const PassTotals& totals = report.figures.sum;
  report::JsonLine line;
  line.add("pass", std::int64_t{report.pass})
      .add("train_loss", totals.train_loss())
      .add("train_accuracy", totals.train_accuracy())
      .add("test_loss", report.evaluation.loss)
      .add("test_accuracy", report.evaluation.accuracy)
      .add("samples_per_sec", totals.samples / std::max(report.figures.pass_seconds, 1e-9))
      .add("pass_seconds", report.figures.pass_seconds);
  if (is_language_model(job.data)) {  // every window predicts one word
    add_perplexities(line, totals.train_loss(), report.evaluation.valid_loss, report.evaluation.loss);
    line.add("words_per_sec", totals.samples / std::max(report.figures.pass_seconds, 1e-9));
  }
  if (report.evaluation.ctr) report::add_ctr_metrics(line, *report.evaluation.ctr);
  add_run_fields(line, job, report);
  add_exchange_fields(line, job, report);
  if (job.tables.any_exact_keys()) add_keyed_fields(line, report);
  append_line_durably(job.config.output_dir / "metrics.jsonl", line.str());
}

// Figures under their metrics.jsonl names as TensorBoard scalars named `prefix` + name, at `step`.
void write_named_scalars(report::EventWriter& board, std::int64_t step, const std::string& prefix,
                         const std::vector<std::pair<std::string, double>>& figures) {
  std::vector<std::string> tags;  // the Scalars' views point into them
  tags.reserve(figures.size());
  std::vector<report::Scalar> scalars;
  for (const auto& [name, value] : figures) scalars.push_back({tags.emplace_back(prefix + name), value});
  board.write_scalars(step, scalars);
}

// The main figures again, for TensorBoard, at the lead trainer's global step at the end of the pass: one step axis
// for every tag, so that a resumed run's restart (EventWriter::write_restart) purges pass and step scalars alike.
void write_pass_scalars(const run_common::JobContext& job, const PassReport& report, report::EventWriter& board) {
  const PassTotals& totals = report.figures.sum;
  const exchange::StalenessStats& staleness = report.figures.staleness;
  const PerStep per_step{std::max(totals.steps, 1.0)};
  board.write_scalars(report.global_step,
                      {{"pass/train_loss", totals.train_loss()},
                       {"pass/test_loss", report.evaluation.loss},
                       {"pass/train_accuracy", totals.train_accuracy()},
                       {"pass/test_accuracy", report.evaluation.accuracy},
                       {"pass/samples_per_sec", totals.samples / std::max(report.figures.pass_seconds, 1e-9)},
                       {"pass/pass_seconds", report.figures.pass_seconds},
                       {"pass/compute_s_per_step", per_step(totals.compute_seconds)},
                       {"pass/push_s_per_step", per_step(totals.push_seconds)},
                       {"pass/barrier_s_per_step", per_step(totals.sync_seconds)},
                       {"pass/pull_s_per_step", per_step(totals.pull_seconds)},
                       {"pass/allreduce_s_per_step", per_step(totals.allreduce_seconds)},
                       {"pass/update_s_per_step", per_step(totals.update_seconds)},
                       {"pass/copy_s_per_step", per_step(totals.copy_seconds)},
                       {"pass/ssp_gate_s_per_step", per_step(totals.gate_seconds)},
                       {"pass/staleness_mean", staleness.mean()},
                       {"pass/staleness_p95", static_cast<double>(staleness.percentile(0.95))},
                       {"pass/staleness_max", static_cast<double>(staleness.max)},
                       {"pass/learning_rate", job.updates.learning_rate_at(report.global_step)}});
  if (const std::optional<report::CtrMetrics>& ctr = report.evaluation.ctr) {
    write_named_scalars(board, report.global_step, "pass/", report::ctr_figures(*ctr));
  }
}

}  // namespace

Evaluation evaluate(nn::Model& model, const data::Samples& test, std::size_t batch_size,
                    const BeforeBatch& before_batch, std::optional<double> training_click_rate) {
  const std::size_t width = test.meta.sample_size();
  const std::size_t count = test.labels.size();
  double loss_sum = 0;
  std::size_t correct = 0;
  std::vector<float> features;  // a batch's copy, for before_batch to rewrite
  core::JaggedIds bags;         // CTR data: the batch's categorical fields
  std::vector<float> logits;    // CTR metrics: one logit per sample
  report::PredictionRun predictions;
  for (std::size_t start = 0; start < count; start += batch_size) {
    const std::size_t n = std::min(batch_size, count - start);
    std::span<const float> batch(test.features.data() + start * width, n * width);
    if (test.meta.categorical) {
      bags = core::sample_range(test.categorical, start, n);
      model.set_categorical(&bags);
    }
    if (before_batch) {
      features.assign(batch.begin(), batch.end());
      before_batch(features, test.meta.categorical ? &bags : nullptr, n);
      batch = features;
    }
    const std::span<const std::int32_t> labels(test.labels.data() + start, n);
    nn::BatchResult result;
    if (training_click_rate) {
      logits.resize(n);
      result = model.evaluate_batch_logits(batch, labels, n, logits);
      predictions.add(logits, labels);
    } else {
      result = model.evaluate_batch(batch, labels, n);
    }
    loss_sum += result.loss_sum;
    correct += result.correct;
  }
  Evaluation evaluation;
  evaluation.loss = loss_sum / static_cast<double>(count);
  evaluation.accuracy = static_cast<double>(correct) / static_cast<double>(count);
  if (training_click_rate) evaluation.ctr = report::ctr_metrics(predictions.sorted(), *training_click_rate);
  return evaluation;
}

namespace {

// The pass folder names its model and data (checkpoint/pass_model.h): evaluate, predict and export need no flags.
std::vector<std::pair<std::string, std::string>> pass_model_files(const run_common::JobContext& job,
                                                                  std::optional<double> training_click_rate) {
  checkpoint::PassModelInfo info;
  info.source = job.model.spec.source;
  info.input = job.model.input;
  info.classes = job.model.classes;
  info.dataset = job.data.meta.dataset;
  info.tokens = job.data.meta.tokens.has_value();
  info.vocab_size = job.data.meta.tokens ? job.data.meta.tokens->vocab_size : 0;
  info.data_dir = job.config.data_dir.string();
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", data::shard_crc32(job.data.test_shard));
  info.data_fingerprint = cat(job.data.test_shard.filename().string(), ":", crc);
  info.training_click_rate = training_click_rate;
  return checkpoint::pass_model_files(job.model.spec.text, info);
}

}  // namespace

void write_pass_folder(const run_common::JobContext& job, int pass, std::span<const float> parameters,
                       std::span<const float> state, exchange::RowTableAccess* read_tables,
                       std::optional<double> training_click_rate) {
  // The trainer's flat vector starts with the dense layout (run_common/table_layout.h); the tables come row by row.
  std::vector<nn::ParameterInfo> layout = job.dense_parameters;
  parameters = parameters.first(job.dense_count);
  std::vector<checkpoint::StreamedTensor> tables;
  for (std::size_t t = 0; t < job.tables.size(); ++t) {
    PSTRAIN_ASSERT(read_tables != nullptr, "no way to read table ", job.tables.table(t).name, " from the servers");
    const auto found = std::find_if(job.model.parameters.begin(), job.model.parameters.end(),
                                    [&](const nn::ParameterInfo& p) { return p.name == job.tables.table(t).name; });
    tables.push_back({*found, [t, read_tables](std::uint64_t first, std::uint64_t count, std::span<float> out) {
                        read_tables->read_table_rows(t, first, count, out);
                      }});
    if (job.tables.table(t).exact_keys()) {  // its held rows after the default row
      tables.back().keys = read_tables->held_ids(t);
      tables.back().info.shape.at(0) = tables.back().keys->size() + 1;
    }
  }
  std::vector<float> flat;
  if (!state.empty()) {
    for (nn::ParameterInfo info : job.model.state) {
      info.offset += job.dense_count;
      layout.push_back(std::move(info));
    }
    flat.assign(parameters.begin(), parameters.end());
    flat.insert(flat.end(), state.begin(), state.end());
    parameters = flat;
  }
  // A language model's pass folder carries its vocabulary: the embedding table's row r is the word on line r.
  std::vector<std::filesystem::path> beside;
  if (job.data.meta.tokens) beside.push_back(job.config.data_dir / "vocab.txt");
  checkpoint::write_pass_folder(job.config.output_dir, pass, layout, parameters, !job.config.resume.empty(), tables,
                                beside, pass_model_files(job, training_click_rate));
}

void report_pass(const run_common::JobContext& job, const PassReport& report, report::EventWriter* board) {
  log_pass(job, report);
  append_metrics_line(job, report);
  if (is_language_model(job.data) && report.evaluation.valid_loss)
    keep_best_valid(job.config.output_dir, report.pass, *report.evaluation.valid_loss);
  if (board != nullptr) write_pass_scalars(job, report, *board);
}

namespace {

// The test figures of an evaluation under their metrics.jsonl names, as the pass record has them.
std::vector<std::pair<std::string, double>> test_figures(const run_common::JobContext& job,
                                                         const Evaluation& evaluation) {
  std::vector<std::pair<std::string, double>> figures{{"test_loss", evaluation.loss},
                                                      {"test_accuracy", evaluation.accuracy}};
  if (is_language_model(job.data)) {
    if (evaluation.valid_loss) figures.emplace_back("valid_perplexity", std::exp(*evaluation.valid_loss));
    figures.emplace_back("test_perplexity", std::exp(evaluation.loss));
  }
  if (const std::optional<report::CtrMetrics>& ctr = evaluation.ctr) {
    const auto ctr_figures = report::ctr_figures(*ctr);
    figures.insert(figures.end(), ctr_figures.begin(), ctr_figures.end());
  }
  return figures;
}

}  // namespace

void report_evaluation(const run_common::JobContext& job, const StepEvaluation& report, report::EventWriter* board) {
  const auto figures = test_figures(job, report.evaluation);
  std::string text;
  for (const auto& [name, value] : figures) text += cat(" ", name, " ", value);
  log_info("step ", report.global_step, " (pass ", report.pass, " step ", report.step_in_pass, "/", report.steps,
           "):", text, " (evaluated in ", report.seconds, " s)");
  report::JsonLine line;
  line.add("kind", std::string(report::kEvaluationKind))
      .add("step", report.global_step)
      .add("in_pass", std::int64_t{report.pass})
      .add("step_in_pass", report.step_in_pass)
      .add("steps_in_pass", report.steps);
  for (const auto& [name, value] : figures) line.add(name, value);
  line.add("eval_seconds", report.seconds).add("elapsed_s", job.elapsed_seconds());
  append_line_durably(job.config.output_dir / "metrics.jsonl", line.str());
  if (board != nullptr) write_named_scalars(*board, report.global_step, "eval/", figures);
}

void report_step(const run_common::JobContext& job, int pass, std::int64_t steps_done, std::int64_t steps,
                 const PassTotals& totals, std::chrono::steady_clock::time_point pass_start,
                 exchange::GradientExchange& exchange, std::int64_t global_step, report::EventWriter* board) {
  log_info("pass ", pass, " step ", steps_done, "/", steps, " loss ", totals.train_loss());
  if (board == nullptr) return;
  // This trainer's figures so far in the pass, at step = its global step.
  const double done = static_cast<double>(steps_done);
  const double seconds = seconds_since(pass_start);
  const exchange::ExchangeTimers& timers = exchange.timers();
  board->write_scalars(global_step, {{"step/train_loss", totals.train_loss()},
                                     {"step/train_accuracy", totals.train_accuracy()},
                                     {"step/trainer_samples_per_sec", totals.samples / seconds},
                                     {"step/compute_s_per_step", totals.compute_seconds / done},
                                     {"step/push_s_per_step", timers.push_seconds / done},
                                     {"step/barrier_s_per_step", timers.sync_seconds / done},
                                     {"step/pull_s_per_step", timers.pull_seconds / done},
                                     {"step/allreduce_s_per_step", timers.allreduce_seconds / done},
                                     {"step/update_s_per_step", timers.update_seconds / done},
                                     {"step/copy_s_per_step", totals.copy_seconds / done},
                                     {"step/ssp_gate_s_per_step", timers.gate_seconds / done},
                                     {"step/staleness_mean", exchange.staleness().mean()},
                                     {"step/learning_rate", job.updates.learning_rate_at(global_step)}});
}

}  // namespace pstrain::trainer
