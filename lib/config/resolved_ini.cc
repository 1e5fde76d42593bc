#include "config/resolved_ini.h"

#include <array>
#include <charconv>

#include "core/join_numbers.h"
#include "core/options.h"

namespace pstrain::config {

namespace po = boost::program_options;

namespace {

// Replaces the parsed default of `name` by `resolved` (the type the flag parses to), leaving a given value alone.
void write_resolved(po::variables_map& values, const std::string& name, boost::any resolved) {
  const auto found = values.find(name);
  if (found == values.end() || !found->second.defaulted()) return;
  found->second.value() = std::move(resolved);
}

// The shortest text that reads back as `value` ("0.0125", not the 9 digits a float prints to round-trip).
std::string shortest(float value) {
  std::array<char, 32> text{};
  const auto end = std::to_chars(text.data(), text.data() + text.size(), value).ptr;
  return std::string(text.data(), end);
}

}  // namespace

std::string resolved_ini(const po::variables_map& values, const TrainConfig& config) {
  po::variables_map resolved = values;
  write_resolved(resolved, "optimizer", config.optimizer.kind);
  write_resolved(resolved, "lr", shortest(config.optimizer.learning_rate));
  write_resolved(resolved, "batch-size", static_cast<long long>(config.batch_size));
  write_resolved(resolved, "embedding-dim", static_cast<long long>(config.embedding_dim));
  write_resolved(resolved, "hidden", config.hidden.empty() ? std::string("none") : join_numbers(config.hidden, ","));
  return to_ini(resolved);
}

}  // namespace pstrain::config
