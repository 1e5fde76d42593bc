#include "inference/evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"

namespace pstrain::inference {

namespace {

std::string number_text(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

EvaluationSums sum_evaluation(nn::GraphModel& model, const data::Samples& samples, std::size_t batch,
                              bool language_model, const OnLogits& on_logits, const BeforeBatch& before_batch) {
  const std::size_t width = samples.meta.sample_size();
  const std::size_t classes = model.num_classes();
  const std::size_t outputs = model.output_size();  // the classes, or one logit for a click model
  const bool click_model = outputs == 1 && classes == 2;
  const std::size_t count = samples.labels.size();
  EvaluationSums sums;
  sums.samples = count;
  if (!language_model) sums.confusion.assign(classes * classes, 0);
  std::vector<float> logits;
  std::vector<float> features;  // a batch's copy for before_batch to rewrite
  core::JaggedIds bags;         // CTR data: the batch's categorical fields
  for (std::size_t first = 0; first < count; first += batch) {
    const std::size_t n = std::min(batch, count - first);
    std::span<const float> batch_features(samples.features.data() + first * width, n * width);
    if (samples.meta.categorical) {
      bags = core::sample_range(samples.categorical, first, n);
      model.set_categorical(&bags);
    }
    if (before_batch) {
      features.assign(batch_features.begin(), batch_features.end());
      before_batch(features, samples.meta.categorical ? &bags : nullptr, n);
      batch_features = features;
    }
    logits.resize(n * outputs);
    const nn::BatchResult result =
        model.evaluate_batch_logits(batch_features, {samples.labels.data() + first, n}, n, logits);
    sums.loss_sum += result.loss_sum;
    sums.correct += result.correct;
    if (on_logits) on_logits(first, n, logits);
    if (language_model) continue;
    if (click_model) sums.clicks.add(logits, {samples.labels.data() + first, n});
    for (std::size_t i = 0; i < n; ++i) {
      if (click_model) {  // a click is predicted where the logit is positive, as the loss's accuracy counts it
        ++sums.confusion[static_cast<std::size_t>(samples.labels[first + i]) * 2 + (logits[i] > 0 ? 1 : 0)];
        continue;
      }
      const float* row = logits.data() + i * classes;
      // The first maximum, as the loss's arg-max counts it.
      const auto predicted = static_cast<std::size_t>(std::max_element(row, row + classes) - row);
      ++sums.confusion[static_cast<std::size_t>(samples.labels[first + i]) * classes + predicted];
    }
  }
  return sums;
}

Evaluation finish_evaluation(EvaluationSums sums, std::size_t classes, bool language_model,
                             std::optional<double> training_click_rate) {
  if (sums.samples == 0) throw Error(ExitCode::kInputData, "the data hold no samples to evaluate");
  Evaluation evaluation;
  evaluation.samples = sums.samples;
  evaluation.loss = sums.loss_sum / static_cast<double>(sums.samples);
  evaluation.accuracy = static_cast<double>(sums.correct) / static_cast<double>(sums.samples);
  if (language_model) {
    evaluation.perplexity = std::exp(evaluation.loss);
    return evaluation;
  }
  if (sums.clicks.size() > 0) {
    evaluation.ctr = report::ctr_metrics(sums.clicks.sorted(),
                                         training_click_rate.value_or(std::numeric_limits<double>::quiet_NaN()));
  }
  PSTRAIN_ASSERT(sums.confusion.size() == classes * classes, sums.confusion.size(), " confusion cells for ", classes,
                 " classes");
  for (std::size_t label = 0; label < classes; ++label) {
    const auto row = sums.confusion.begin() + static_cast<std::ptrdiff_t>(label * classes);
    evaluation.confusion.emplace_back(row, row + static_cast<std::ptrdiff_t>(classes));
    std::uint64_t total = 0;
    for (const std::uint64_t cell : evaluation.confusion.back()) total += cell;
    evaluation.class_accuracy.push_back(total == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                   : static_cast<double>(row[static_cast<std::ptrdiff_t>(label)]) /
                                                         static_cast<double>(total));
  }
  return evaluation;
}

Evaluation evaluate_samples(nn::GraphModel& model, const data::Samples& samples, std::size_t batch, bool language_model,
                            const OnLogits& on_logits, std::optional<double> training_click_rate,
                            const BeforeBatch& before_batch) {
  return finish_evaluation(sum_evaluation(model, samples, batch, language_model, on_logits, before_batch),
                           model.num_classes(), language_model, training_click_rate);
}

BeforeBatch place_keyed_lookups(KeyedLookups* lookups, nn::Model& model) {
  if (lookups == nullptr) return {};
  return [lookups, &model](std::span<float>, const core::JaggedIds* categorical, std::size_t) {
    PSTRAIN_ASSERT(categorical != nullptr, "a model of keyed tables reads categorical fields, and the batch has none");
    lookups->place(*categorical, model);
  };
}

std::string evaluation_json(const Evaluation& evaluation, const std::string& pass_dir, const std::string& data_file,
                            const std::optional<EvaluationRanks>& ranks) {
  const auto quoted = [](const std::string& text) {
    std::string out = "\"";
    for (const char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      } else {
        out += c;
      }
    }
    return out + "\"";
  };
  std::string json = cat("{\n  \"pass_folder\": ", quoted(pass_dir), ",\n  \"data\": ", quoted(data_file),
                         ",\n  \"samples\": ", evaluation.samples, ",\n  \"loss\": ", number_text(evaluation.loss),
                         ",\n  \"accuracy\": ", number_text(evaluation.accuracy));
  if (ranks) json += cat(",\n  \"ranks\": ", ranks->ranks, ",\n  \"servers\": ", ranks->servers);
  if (evaluation.perplexity) json += cat(",\n  \"perplexity\": ", number_text(*evaluation.perplexity));
  if (const std::optional<report::CtrMetrics>& ctr = evaluation.ctr) {
    json += cat(",\n  \"auc\": ", number_text(ctr->auc), ",\n  \"logloss\": ", number_text(ctr->logloss),
                ",\n  \"ne\": ", number_text(ctr->ne), ",\n  \"calibration\": ", number_text(ctr->calibration));
  }
  if (!evaluation.confusion.empty()) {
    json += ",\n  \"class_accuracy\": [";
    for (std::size_t i = 0; i < evaluation.class_accuracy.size(); ++i) {
      json += (i == 0 ? "" : ", ") + number_text(evaluation.class_accuracy[i]);
    }
    json += "],\n  \"confusion\": [";
    for (std::size_t label = 0; label < evaluation.confusion.size(); ++label) {
      json += label == 0 ? "\n    [" : ",\n    [";
      for (std::size_t i = 0; i < evaluation.confusion[label].size(); ++i) {
        json += cat(i == 0 ? "" : ", ", evaluation.confusion[label][i]);
      }
      json += "]";
    }
    json += "\n  ]";
  }
  return json + "\n}\n";
}

std::string evaluation_text(const Evaluation& evaluation) {
  char line[160];
  std::snprintf(line, sizeof line, "samples %zu  loss %.6f  accuracy %.4f", evaluation.samples, evaluation.loss,
                evaluation.accuracy);
  std::string text = line;
  if (evaluation.perplexity) {
    std::snprintf(line, sizeof line, "  perplexity %.4f", *evaluation.perplexity);
    text += line;
  }
  if (const std::optional<report::CtrMetrics>& ctr = evaluation.ctr) {
    std::snprintf(line, sizeof line, "  auc %.6f  logloss %.6f  ne %.6f  calibration %.4f", ctr->auc, ctr->logloss,
                  ctr->ne, ctr->calibration);
    text += line;
  }
  text += "\n";
  for (std::size_t label = 0; label < evaluation.class_accuracy.size(); ++label) {
    std::snprintf(line, sizeof line, "  class %zu: accuracy %.4f\n", label, evaluation.class_accuracy[label]);
    text += line;
  }
  return text;
}

}  // namespace pstrain::inference
