#include "inference/prediction.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "inference/npy_writer.h"

namespace pstrain::inference {

namespace {

// A CSV field that may hold commas or quotes (a vocabulary has "," and "\"" as words).
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::vector<float> softmax(std::span<const float> logits) {
  const float largest = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (const float logit : logits) total += std::exp(static_cast<double>(logit) - largest);
  std::vector<float> probabilities(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    probabilities[i] = static_cast<float>(std::exp(static_cast<double>(logits[i]) - largest) / total);
  }
  return probabilities;
}

PredictionTable::PredictionTable(bool npy, std::size_t classes, std::size_t top_k, std::vector<std::string> words,
                                 bool logits, bool click)
    : npy_(npy),
      logits_(logits),
      click_(click),
      classes_(classes),
      top_k_(std::min(top_k, classes)),
      words_(std::move(words)) {
  if (npy_) return;
  if (click_) {
    csv_ = "sample,label,click_probability\n";
    return;
  }
  csv_ = "sample,label";
  for (std::size_t k = 1; k <= top_k_; ++k) csv_ += cat_k(k);
  if (!words_.empty()) {
    for (std::size_t k = 1; k <= top_k_; ++k) csv_ += ",word" + std::to_string(k);
  }
  csv_ += "\n";
}

std::string PredictionTable::cat_k(std::size_t k) {
  return ",id" + std::to_string(k) + ",p" + std::to_string(k);
}

void PredictionTable::add(std::span<const float> logits, std::span<const std::int32_t> labels, std::size_t count) {
  std::vector<std::size_t> order(classes_);
  char number[32];
  for (std::size_t i = 0; i < count; ++i, ++samples_) {
    if (click_) {
      const float p = logits_ ? logits[i] : static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logits[i]))));
      if (npy_) {
        probabilities_.push_back(p);
        continue;
      }
      std::snprintf(number, sizeof number, "%.9g", p);
      csv_ += std::to_string(samples_) + "," + (labels[i] < 0 ? std::string() : std::to_string(labels[i])) + "," +
              number + "\n";
      continue;
    }
    if (npy_ && logits_) {
      const std::span<const float> row = logits.subspan(i * classes_, classes_);
      probabilities_.insert(probabilities_.end(), row.begin(), row.end());
      continue;
    }
    const std::vector<float> probabilities = softmax(logits.subspan(i * classes_, classes_));
    if (npy_) {
      probabilities_.insert(probabilities_.end(), probabilities.begin(), probabilities.end());
      continue;
    }
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Most probable first; the lower id first among equals (as arg-max takes the first maximum).
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top_k_), order.end(),
                      [&](std::size_t a, std::size_t b) {
                        return probabilities[a] > probabilities[b] || (probabilities[a] == probabilities[b] && a < b);
                      });
    csv_ += std::to_string(samples_) + "," + (labels[i] < 0 ? std::string() : std::to_string(labels[i]));
    for (std::size_t k = 0; k < top_k_; ++k) {
      std::snprintf(number, sizeof number, "%.9g", probabilities[order[k]]);
      csv_ += "," + std::to_string(order[k]) + "," + number;
    }
    for (std::size_t k = 0; k < top_k_ && !words_.empty(); ++k) {
      csv_ += "," + quoted(order[k] < words_.size() ? words_[order[k]] : std::string());
    }
    csv_ += "\n";
  }
}

std::string PredictionTable::bytes() const {
  if (!npy_) return csv_;
  return click_ ? npy_bytes({samples_}, probabilities_) : npy_bytes({samples_, classes_}, probabilities_);
}

}  // namespace pstrain::inference
