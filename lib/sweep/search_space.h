#pragma once
// The search space of a sweep: a small INI-like text file (no YAML/JSON dependency), parsed and checked against
// pstrain's own flag declarations so a typo fails before a single run is launched.
//
//   # comment (also after a value)
//   [fixed]                      one value, passed to every run
//   passes = 2
//   hidden = 64,32
//   [grid]                       alternatives separated by '|': the sweep is their cartesian product
//   lr = 0.01 | 0.05 | 0.1
//   [random]                     distributions for `random --trials N`
//   lr = loguniform(0.001, 0.1)  log-uniform on [lo, hi], 0 < lo < hi
//   momentum = uniform(0.8, 0.99)   uniform on [lo, hi], lo < hi
//   seed = int(1, 1000)          integer uniform on [lo, hi], inclusive, lo < hi
//   batch-size = choice(32 | 64 | 128)
//
// Keys are pstrain flag names without "--" (a leading "--" is accepted). --data-dir and --output-dir belong to
// the tool and may not appear. A flag may appear in one section only.
#include <filesystem>
#include <string>
#include <vector>

namespace pstrain::sweep {

struct FixedEntry {
  std::string flag;
  std::string value;
  int line = 0;
};

struct GridEntry {
  std::string flag;
  std::vector<std::string> values;
  int line = 0;
};

enum class Distribution { kUniform, kLogUniform, kInt, kChoice };

struct RandomEntry {
  std::string flag;
  Distribution distribution = Distribution::kUniform;
  double lo = 0, hi = 0;             // kUniform, kLogUniform
  long long int_lo = 0, int_hi = 0;  // kInt
  std::vector<std::string> choices;  // kChoice
  int line = 0;
};

struct SearchSpace {
  std::string source;  // file name, for messages
  std::vector<FixedEntry> fixed;
  std::vector<GridEntry> grid;
  std::vector<RandomEntry> random;
};

// Throws pstrain::Error(kUsage) naming "<source>:<line>" for every malformed, unknown or contradictory entry.
SearchSpace parse_search_space(const std::string& text, const std::string& source);
// Throws Error(kInputData) when the file cannot be read.
SearchSpace load_search_space(const std::filesystem::path& path);

}  // namespace pstrain::sweep
