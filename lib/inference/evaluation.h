#pragma once
// A saved model's figures on a data set, forward only: the mean cross-entropy (without label smoothing), the
// accuracy, for classifiers the per-class accuracy and the confusion matrix, for language models the perplexity
// (exp of the mean loss per predicted word, as trainer/language_metrics.h reports it). The figures are made of
// sums (EvaluationSums), so that ranks that each score a part of the data add theirs up (evaluation_ranks.h).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "data/shard.h"
#include "inference/keyed_tables.h"
#include "nn/graph_model.h"
#include "report/ctr_metrics.h"

namespace pstrain::inference {

struct Evaluation {
  std::size_t samples = 0;
  double loss = 0;
  double accuracy = 0;
  std::optional<double> perplexity;                   // language models
  std::vector<std::vector<std::uint64_t>> confusion;  // [label][predicted]; classifiers only
  std::vector<double> class_accuracy;                 // per label; NaN where the data hold none of it
  std::optional<report::CtrMetrics> ctr;              // click models (one logit, loss=bce): AUC, NE, ...
};

// What the figures are made of, over some batches: integer counts (summed exactly across ranks) and the loss
// summed in double.
struct EvaluationSums {
  std::uint64_t samples = 0;  // a language model's samples are its predicted words
  double loss_sum = 0;
  std::uint64_t correct = 0;
  std::vector<std::uint64_t> confusion;  // classes x classes, [label][predicted] row-major; empty for language models
  report::PredictionRun clicks;          // click models: every sample's logit and label (ranks: gathered)
};

// Called before each batch with a copy of its features (count samples) that it may rewrite: a model whose row
// tables are served by other ranks fetches the batch's rows and turns its ids into places in its row caches.
using BeforeBatch =
    std::function<void(std::span<float> features, const core::JaggedIds* categorical, std::size_t count)>;
using OnLogits = std::function<void(std::size_t first, std::size_t count, std::span<const float> logits)>;

// Runs `model` over `samples` in batches of at most `batch` (the model's maximum batch); `on_logits(first, count,
// logits)` sees every batch's logits (count x the model's outputs per sample: the classes, or one for a click
// model) when given, `before_batch` every batch's features. CTR data's bags go to the model batch by batch.
EvaluationSums sum_evaluation(nn::GraphModel& model, const data::Samples& samples, std::size_t batch,
                              bool language_model, const OnLogits& on_logits = {},
                              const BeforeBatch& before_batch = {});

// The figures from the sums; a click model's CTR metrics with `training_click_rate` as NE's baseline (NE is NaN
// without it). Throws Error(kInputData) when they hold no sample.
Evaluation finish_evaluation(EvaluationSums sums, std::size_t classes, bool language_model,
                             std::optional<double> training_click_rate = {});

// sum_evaluation then finish_evaluation, on one process. `language_model` picks perplexity over the
// confusion matrix (a vocabulary-sized matrix would be too large to be of use).
Evaluation evaluate_samples(nn::GraphModel& model, const data::Samples& samples, std::size_t batch, bool language_model,
                            const OnLogits& on_logits = {}, std::optional<double> training_click_rate = {},
                            const BeforeBatch& before_batch = {});

// What sum_evaluation runs before each batch for a model of keyed tables (keyed_tables.h): the batch's lookups
// placed in `lookups`, handed to `model`; no callback (nothing copied) for a model without them. Both outlive it.
BeforeBatch place_keyed_lookups(KeyedLookups* lookups, nn::Model& model);

// Where an evaluation ran when it ran on several MPI ranks: the ranks, and how many of them served row tables.
struct EvaluationRanks {
  int ranks = 1;
  int servers = 0;
};

// The figures as one JSON object, with the pass folder and the data file named (and the ranks, when given).
std::string evaluation_json(const Evaluation& evaluation, const std::string& pass_dir, const std::string& data_file,
                            const std::optional<EvaluationRanks>& ranks = std::nullopt);
// A few lines for the terminal: the figures, and for classifiers the per-class accuracy.
std::string evaluation_text(const Evaluation& evaluation);

}  // namespace pstrain::inference
