#include "nn/layer_attributes.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/parse_number.h"

namespace pstrain::nn {

LayerAttributes::LayerAttributes(std::map<std::string, std::string> values, std::string where)
    : values_(std::move(values)), where_(std::move(where)) {}

const std::string* LayerAttributes::find(const std::string& key) {
  used_.insert(key);
  const auto found = values_.find(key);
  return found == values_.end() ? nullptr : &found->second;
}

void LayerAttributes::fail(const std::string& problem) const {
  throw Error(ExitCode::kUsage, where_ + problem);
}

std::size_t LayerAttributes::positive(const std::string& key) {
  if (values_.find(key) == values_.end()) fail(cat("needs ", key, "=N"));
  return positive(key, 1);
}

std::size_t LayerAttributes::positive(const std::string& key, std::size_t fallback) {
  const std::size_t value = non_negative(key, fallback);
  if (value == 0) fail(cat(key, " must be at least 1"));
  return value;
}

std::size_t LayerAttributes::non_negative(const std::string& key, std::size_t fallback) {
  const std::string* text = find(key);
  if (text == nullptr) return fallback;
  std::size_t value = 0;
  for (const char c : *text) {
    if (c < '0' || c > '9' || value > (std::numeric_limits<int>::max() - 9) / 10) {
      fail(cat(key, "=", *text, " is not an integer in [0, 2^31)"));
    }
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  return value;
}

float LayerAttributes::number(const std::string& key, float fallback, float low, float high) {
  const std::string* text = find(key);
  if (text == nullptr) return fallback;
  const std::optional<float> parsed = parse_number<float>(*text);
  if (!parsed) fail(cat(key, "=", *text, " is not a number"));
  const float value = *parsed;
  if (value < low || value >= high) {
    fail(cat(key, "=", *text, " is outside [", low, ", ", std::isinf(high) ? std::string("inf") : cat(high), ")"));
  }
  return value;
}

bool LayerAttributes::flag(const std::string& key, bool fallback) {
  const std::string* text = find(key);
  if (text == nullptr) return fallback;
  if (*text == "true") return true;
  if (*text == "false") return false;
  fail(cat(key, "=", *text, ": expected true or false"));
}

std::string LayerAttributes::choice(const std::string& key, const std::string& fallback,
                                    const std::vector<std::string>& allowed) {
  const std::string* text = find(key);
  if (text == nullptr) return fallback;
  for (const std::string& option : allowed) {
    if (*text == option) return option;
  }
  std::string options;
  for (const std::string& option : allowed) options += (options.empty() ? "" : ", ") + option;
  fail(cat(key, "=", *text, ": expected one of ", options));
}

void LayerAttributes::check_all_used() const {
  for (const auto& [key, value] : values_) {
    if (used_.count(key) == 0) fail(cat("unknown attribute '", key, "'"));
  }
}

}  // namespace pstrain::nn
