#include "sweep/expand.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "core/error.h"
#include "sweep/pstrain_flags.h"

namespace pstrain::sweep {

namespace {

// Above this, a sweep is almost certainly a mistake in the file (and sets.txt would be enormous).
constexpr std::size_t kMaxSets = 100000;

Flags fixed_flags(const SearchSpace& space) {
  Flags flags;
  for (const auto& entry : space.fixed) flags.emplace_back(entry.flag, entry.value);
  return flags;
}

// Every generated set also passes pstrain's validation as a whole (a combination can be wrong when each value
// alone is fine, e.g. a drawn bound), so a bad set fails here, not as run N of a cluster job.
void check_sets(const std::vector<HyperparameterSet>& sets) {
  for (const auto& set : sets) check_flag_values(set.flags, set_name(set.id));
}

std::size_t index_below(std::mt19937_64& engine, std::size_t count) {
  const auto index = static_cast<std::size_t>(unit_interval(engine()) * static_cast<double>(count));
  return index < count ? index : count - 1;
}

// Short, readable values that still lie inside [lo, hi]: 6 significant digits unless rounding left the range.
std::string format_within(double value, double lo, double hi) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  const double rounded = std::strtod(buffer, nullptr);
  if (rounded < lo || rounded > hi) std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string draw(const RandomEntry& entry, std::mt19937_64& engine) {
  switch (entry.distribution) {
    case Distribution::kChoice: return entry.choices[index_below(engine, entry.choices.size())];
    case Distribution::kInt: {
      const auto span = static_cast<std::size_t>(entry.int_hi - entry.int_lo) + 1;
      return std::to_string(entry.int_lo + static_cast<long long>(index_below(engine, span)));
    }
    case Distribution::kUniform:
      return format_within(entry.lo + unit_interval(engine()) * (entry.hi - entry.lo), entry.lo, entry.hi);
    case Distribution::kLogUniform: {
      const double log_lo = std::log(entry.lo), log_hi = std::log(entry.hi);
      const double value = std::exp(log_lo + unit_interval(engine()) * (log_hi - log_lo));
      return format_within(std::min(std::max(value, entry.lo), entry.hi), entry.lo, entry.hi);
    }
  }
  return {};
}

}  // namespace

double unit_interval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

std::vector<HyperparameterSet> expand_grid(const SearchSpace& space) {
  if (!space.random.empty()) {
    throw Error(ExitCode::kUsage, cat(space.source, ":", space.random.front().line,
                                      ": [random] entries are drawn by `pstrain-sweep random`, not `grid`"));
  }
  if (space.grid.empty()) throw Error(ExitCode::kUsage, cat(space.source, ": `grid` needs a [grid] section"));
  std::size_t total = 1;
  for (const auto& entry : space.grid) {
    total *= entry.values.size();
    if (total > kMaxSets) {
      throw Error(ExitCode::kUsage, cat(space.source, ": the grid has more than ", kMaxSets, " sets"));
    }
  }
  std::vector<HyperparameterSet> sets;
  std::vector<std::size_t> digits(space.grid.size(), 0);  // an odometer over the value lists
  for (std::size_t n = 0; n < total; ++n) {
    HyperparameterSet set{static_cast<int>(n) + 1, fixed_flags(space)};
    for (std::size_t i = 0; i < space.grid.size(); ++i)
      set.flags.emplace_back(space.grid[i].flag, space.grid[i].values[digits[i]]);
    sets.push_back(std::move(set));
    for (std::size_t i = space.grid.size(); i-- > 0;) {
      if (++digits[i] < space.grid[i].values.size()) break;
      digits[i] = 0;
    }
  }
  check_sets(sets);
  return sets;
}

std::vector<HyperparameterSet> expand_random(const SearchSpace& space, int trials, std::uint64_t seed) {
  if (trials <= 0 || static_cast<std::size_t>(trials) > kMaxSets) {
    throw Error(ExitCode::kUsage, cat("--trials must be in 1..", kMaxSets, " (got ", trials, ")"));
  }
  std::mt19937_64 engine(seed);
  std::vector<HyperparameterSet> sets;
  for (int n = 0; n < trials; ++n) {
    HyperparameterSet set{n + 1, fixed_flags(space)};
    // File order: [grid] entries then [random] entries, one draw each, so a set depends on seed and file only.
    for (const auto& entry : space.grid)
      set.flags.emplace_back(entry.flag, entry.values[index_below(engine, entry.values.size())]);
    for (const auto& entry : space.random) set.flags.emplace_back(entry.flag, draw(entry, engine));
    sets.push_back(std::move(set));
  }
  check_sets(sets);
  return sets;
}

}  // namespace pstrain::sweep
