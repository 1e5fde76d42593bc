#include "train/metrics.h"

#include <cmath>
#include <cstdio>

namespace pstrain::train {

std::string json_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  return out;
}

JsonLine& JsonLine::add(const std::string& key, double value) {
  char buffer[32];
  if (std::isfinite(value)) {
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "null");  // JSON has no NaN
  }
  fields_.emplace_back(key, buffer);
  return *this;
}

JsonLine& JsonLine::add(const std::string& key, std::int64_t value) {
  fields_.emplace_back(key, std::to_string(value));
  return *this;
}

JsonLine& JsonLine::add(const std::string& key, const std::string& value) {
  fields_.emplace_back(key, "\"" + json_escape(value) + "\"");
  return *this;
}

JsonLine& JsonLine::add_array(const std::string& key, const std::vector<std::int64_t>& values) {
  std::string encoded = "[";
  for (std::size_t i = 0; i < values.size(); ++i) encoded += (i ? ", " : "") + std::to_string(values[i]);
  fields_.emplace_back(key, encoded + "]");
  return *this;
}

std::string JsonLine::str() const {
  std::string out = "{";
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    out += (i ? ", \"" : "\"") + json_escape(fields_[i].first) + "\": " + fields_[i].second;
  }
  return out + "}";
}

}  // namespace pstrain::train
