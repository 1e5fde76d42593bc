#pragma once
// One JSON object per pass, appended to OUTPUT/metrics.jsonl, one line each (report/json_line.h writes it: keys in
// the order added, UTF-8 strings as they are, numbers that read back as the same double).
#include <cstdint>
#include <string>
#include <vector>

#include "report/json_line.h"

namespace pstrain::report {

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
