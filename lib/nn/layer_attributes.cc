#include "nn/layer_attributes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "core/error.h"
#include "core/parse_number.h"

namespace pstrain::nn {

namespace {

constexpr std::size_t kMaxListLength = 4096;

// Decimal digits below 2^31; false for anything else (empty, a space, a sign, an overflow).
bool parse_count(std::string_view text, std::size_t& value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return false;
  const std::optional<int> parsed = parse_number<int>(text);
  value = parsed ? static_cast<std::size_t>(*parsed) : 0;
  return parsed.has_value();
}

}  // namespace

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
  if (!parse_count(*text, value)) fail(cat(key, "=", *text, " is not an integer in [0, 2^31)"));
  return value;
}

std::vector<std::size_t> LayerAttributes::non_negative_list(const std::string& key) {
  const std::string* text = find(key);
  if (text == nullptr) fail(cat("needs ", key, "=A[,B,C-D...]"));
  std::vector<std::size_t> values;
  std::string_view rest = *text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t dash = item.find('-');
    std::size_t first = 0;
    std::size_t last = 0;
    const bool valid = dash == std::string_view::npos
                           ? parse_count(item, first) && parse_count(item, last)
                           : parse_count(item.substr(0, dash), first) && parse_count(item.substr(dash + 1), last);
    if (!valid || last < first) {
      fail(cat(key, "=", *text, ": '", item, "' is not an integer in [0, 2^31) nor a range A-B with A <= B"));
    }
    // The list is a handful of field indices: a bound keeps a typo (0-2000000000) from running for minutes.
    if (last - first >= kMaxListLength - values.size())
      fail(cat(key, "=", *text, " lists more than ", kMaxListLength, " values"));
    for (std::size_t value = first; value <= last; ++value) {
      if (std::find(values.begin(), values.end(), value) != values.end())
        fail(cat(key, "=", *text, " names ", value, " twice"));
      values.push_back(value);
    }
    if (comma == std::string_view::npos) return values;
    rest = rest.substr(comma + 1);
  }
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
