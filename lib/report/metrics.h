#pragma once
// The records of OUTPUT/metrics.jsonl, one JSON object a line (report/json_line.h writes them: keys in the order
// added, UTF-8 strings as they are, numbers that read back as the same double). Two kinds:
//   a pass record, one per pass, as it always was: {"pass": P, "train_loss": ..., "test_loss": ..., ...};
//   an evaluation record, every --eval-every-steps global steps: {"kind": "eval", "step": G, "in_pass": P,
//     "step_in_pass": S, "test_loss": ..., ...}: the test figures after global step G, without a "pass" key, so
//     that a reader that keys on "pass" never takes it for a pass.
// A reader tells them apart with metrics_record_kind.
#include <cstdint>
#include <string>
#include <vector>

#include "report/json_line.h"

namespace pstrain::report {

inline constexpr const char* kEvaluationKind = "eval";  // "kind" of an evaluation record

enum class MetricsRecord {
  kPass,        // a number under "pass" and no "kind"
  kEvaluation,  // "kind": "eval" and a number under "step"
  kOther,       // anything else (a line from a newer pstrain, a stray edit): readers skip it
};
MetricsRecord metrics_record_kind(const nlohmann::json& record);

// A run resumed from a checkpoint at `pass` and `global_step` trains again what came after it: whether `record`
// stays. Pass records of earlier passes and evaluation records at or before the checkpoint's step stay (the
// evaluation at a checkpoint's step is written before the checkpoint); the run writes the others again. Records of
// another kind stay.
bool kept_on_resume(const nlohmann::json& record, std::int64_t pass, std::int64_t global_step);

class JsonLine {
 public:
  JsonLine& add(const std::string& key, double value);  // a non-finite value is written as null
  JsonLine& add(const std::string& key, std::int64_t value);
  JsonLine& add(const std::string& key, const std::string& value);
  JsonLine& add_array(const std::string& key, const std::vector<std::int64_t>& values);
  std::string str() const;  // {"pass": 0, ...}

 private:
  OrderedJson object_ = OrderedJson::object();
};

}  // namespace pstrain::report
