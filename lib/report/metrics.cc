#include "report/metrics.h"

#include <cmath>

namespace pstrain::report {

JsonLine& JsonLine::add(const std::string& key, double value) {
  object_[key] = std::isfinite(value) ? OrderedJson(value) : OrderedJson(nullptr);  // no NaN in JSON
  return *this;
}

JsonLine& JsonLine::add(const std::string& key, std::int64_t value) {
  object_[key] = value;
  return *this;
}

JsonLine& JsonLine::add(const std::string& key, const std::string& value) {
  object_[key] = value;
  return *this;
}

JsonLine& JsonLine::add_array(const std::string& key, const std::vector<std::int64_t>& values) {
  object_[key] = values;
  return *this;
}

std::string JsonLine::str() const {
  return json_line(object_);
}

}  // namespace pstrain::report
