#include "report/metrics.h"

#include <cmath>

namespace pstrain::report {

MetricsRecord metrics_record_kind(const nlohmann::json& record) {
  const auto kind = record.find("kind");
  if (kind == record.end()) return number_field(record, "pass") ? MetricsRecord::kPass : MetricsRecord::kOther;
  if (kind->is_string() && kind->get<std::string>() == kEvaluationKind && number_field(record, "step")) {
    return MetricsRecord::kEvaluation;
  }
  return MetricsRecord::kOther;
}

bool kept_on_resume(const nlohmann::json& record, std::int64_t pass, std::int64_t global_step) {
  switch (metrics_record_kind(record)) {
    case MetricsRecord::kPass: return *number_field(record, "pass") < static_cast<double>(pass);
    case MetricsRecord::kEvaluation: return *number_field(record, "step") <= static_cast<double>(global_step);
    case MetricsRecord::kOther: break;
  }
  return true;
}

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
