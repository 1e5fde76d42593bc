#pragma once
// A saved model's figures on a data set, forward only, on one process: the mean cross-entropy (without label
// smoothing), the accuracy, for classifiers the per-class accuracy and the confusion matrix, for language models
// the perplexity (exp of the mean loss per predicted word, as train/language_metrics.h reports it).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "data/shard.h"
#include "nn/graph_model.h"

namespace pstrain::inference {

struct Evaluation {
  std::size_t samples = 0;
  double loss = 0;
  double accuracy = 0;
  std::optional<double> perplexity;                   // language models
  std::vector<std::vector<std::uint64_t>> confusion;  // [label][predicted]; classifiers only
  std::vector<double> class_accuracy;                 // per label; NaN where the data hold none of it
};

// Runs `model` over `samples` in batches of at most `batch` (the model's maximum batch); `on_logits(first, count,
// logits)` sees every batch's logits (count x classes) when given. `language_model` picks perplexity over the
// confusion matrix (a vocabulary-sized matrix would be too large to be of use).
Evaluation evaluate_samples(
    nn::GraphModel& model, const data::Samples& samples, std::size_t batch, bool language_model,
    const std::function<void(std::size_t, std::size_t, std::span<const float>)>& on_logits = {});

// The figures as one JSON object, with the pass folder and the data file named.
std::string evaluation_json(const Evaluation& evaluation, const std::string& pass_dir, const std::string& data_file);
// A few lines for the terminal: the figures, and for classifiers the per-class accuracy.
std::string evaluation_text(const Evaluation& evaluation);

}  // namespace pstrain::inference
