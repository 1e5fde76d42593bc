#pragma once
// A node's key=value attributes with typed, checked access. Every read marks the key as known, so that after a
// layer type has planned the node, check_all_used() can reject keys it never asked for (a typo such as
// `filter=32` must not silently fall back to a default). Errors name the file, the line and the layer.
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace pstrain::nn {

class LayerAttributes {
 public:
  // `where` prefixes every error ("model.txt:4: layer conv1 (conv2d): ").
  LayerAttributes(std::map<std::string, std::string> values, std::string where);

  // A positive integer; `fallback` when absent (required() when there is none).
  std::size_t positive(const std::string& key);
  std::size_t positive(const std::string& key, std::size_t fallback);
  std::size_t non_negative(const std::string& key, std::size_t fallback);
  // A finite number in [low, high) (high may be +infinity).
  float number(const std::string& key, float fallback, float low, float high);
  bool flag(const std::string& key, bool fallback);  // true/false
  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed);
  // Non-negative integers separated by commas, a range A-B standing for A, A+1, ..., B: `fields=0,3,5-7`.
  // Required; every value below 2^31, none twice.
  std::vector<std::size_t> non_negative_list(const std::string& key);
  // Whether the node gives `key` (without marking it known).
  bool has(const std::string& key) const { return values_.count(key) > 0; }

  // Error(kUsage) for a key no read asked for.
  void check_all_used() const;
  [[noreturn]] void fail(const std::string& problem) const;
  const std::string& where() const { return where_; }

 private:
  const std::string* find(const std::string& key);

  std::map<std::string, std::string> values_;
  std::set<std::string> used_;
  std::string where_;
};

}  // namespace pstrain::nn
