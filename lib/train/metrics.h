#pragma once
// One JSON object per pass, appended to OUTPUT/metrics.jsonl. The objects are flat (numbers and strings), so a
// small writer is all it takes.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pstrain::train {

class JsonLine {
 public:
  JsonLine& add(const std::string& key, double value);
  JsonLine& add(const std::string& key, std::int64_t value);
  JsonLine& add(const std::string& key, const std::string& value);
  JsonLine& add_array(const std::string& key, const std::vector<std::int64_t>& values);
  std::string str() const;  // {"pass": 0, ...}

 private:
  std::vector<std::pair<std::string, std::string>> fields_;  // key -> encoded value
};

std::string json_escape(const std::string& text);

}  // namespace pstrain::train
