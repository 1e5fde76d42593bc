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

Evaluation evaluate_samples(nn::GraphModel& model, const data::Samples& samples, std::size_t batch, bool language_model,
                            const std::function<void(std::size_t, std::size_t, std::span<const float>)>& on_logits) {
  const std::size_t width = samples.meta.sample_size();
  const std::size_t classes = model.num_classes();
  const std::size_t count = samples.labels.size();
  Evaluation evaluation;
  evaluation.samples = count;
  if (!language_model) evaluation.confusion.assign(classes, std::vector<std::uint64_t>(classes, 0));
  std::vector<float> logits;
  double loss_sum = 0;
  std::size_t correct = 0;
  for (std::size_t first = 0; first < count; first += batch) {
    const std::size_t n = std::min(batch, count - first);
    logits.resize(n * classes);
    const nn::BatchResult result = model.evaluate_batch_logits({samples.features.data() + first * width, n * width},
                                                               {samples.labels.data() + first, n}, n, logits);
    loss_sum += result.loss_sum;
    correct += result.correct;
    if (on_logits) on_logits(first, n, logits);
    if (language_model) continue;
    for (std::size_t i = 0; i < n; ++i) {
      const float* row = logits.data() + i * classes;
      // The first maximum, as the loss's arg-max counts it.
      const auto predicted = static_cast<std::size_t>(std::max_element(row, row + classes) - row);
      ++evaluation.confusion[static_cast<std::size_t>(samples.labels[first + i])][predicted];
    }
  }
  if (count == 0) throw Error(ExitCode::kInputData, "the data hold no samples to evaluate");
  evaluation.loss = loss_sum / static_cast<double>(count);
  evaluation.accuracy = static_cast<double>(correct) / static_cast<double>(count);
  if (language_model) evaluation.perplexity = std::exp(evaluation.loss);
  for (const std::vector<std::uint64_t>& row : evaluation.confusion) {
    std::uint64_t total = 0;
    for (const std::uint64_t cell : row) total += cell;
    const std::size_t label = evaluation.class_accuracy.size();
    evaluation.class_accuracy.push_back(total == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                   : static_cast<double>(row[label]) / static_cast<double>(total));
  }
  return evaluation;
}

std::string evaluation_json(const Evaluation& evaluation, const std::string& pass_dir, const std::string& data_file) {
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
  if (evaluation.perplexity) json += cat(",\n  \"perplexity\": ", number_text(*evaluation.perplexity));
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
  text += "\n";
  for (std::size_t label = 0; label < evaluation.class_accuracy.size(); ++label) {
    std::snprintf(line, sizeof line, "  class %zu: accuracy %.4f\n", label, evaluation.class_accuracy[label]);
    text += line;
  }
  return text;
}

}  // namespace pstrain::inference
