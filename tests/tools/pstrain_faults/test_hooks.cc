#include "test_hooks.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace pstrain::faults {

namespace {

constexpr const char* kVariable = "PSTRAIN_TEST_HOOKS";

template <typename T>
T number(std::string_view name, std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw Error(ExitCode::kUsage, cat(kVariable, ": '", name, "' needs a number, not '", text, "'"));
  }
  return value;
}

void set(TestHooks& hooks, std::string_view name, std::string_view value) {
  if (name == "checkpoint-delay-ms") {
    hooks.checkpoint_delay_ms = number<int>(name, value);
  } else if (name == "step-delay-ms") {
    hooks.step_delay_ms = number<int>(name, value);
  } else if (name == "slow-trainer") {
    hooks.slow_trainer = number<int>(name, value);
  } else if (name == "slow-factor") {
    hooks.slow_factor = number<double>(name, value);
    if (!std::isfinite(hooks.slow_factor) || hooks.slow_factor < 1) {
      throw Error(ExitCode::kUsage, cat(kVariable, ": slow-factor must be >= 1"));
    }
  } else if (name == "leave-delay-ms") {
    hooks.leave_delay_ms = number<int>(name, value);
  } else if (name == "perturb-replica-step") {
    hooks.perturb_replica_step = number<std::int64_t>(name, value);
  } else if (name == "opaque-backend") {
    if (value != "true" && value != "false") {
      throw Error(ExitCode::kUsage, cat(kVariable, ": opaque-backend is true or false, not '", value, "'"));
    }
    hooks.opaque_backend = value == "true";
  } else if (name == "fill-disk") {
    hooks.fill_disk = value;
  } else if (name == "ranks-per-node") {
    hooks.ranks_per_node = number<int>(name, value);
    if (hooks.ranks_per_node < 1) throw Error(ExitCode::kUsage, cat(kVariable, ": ranks-per-node must be >= 1"));
  } else {
    throw Error(ExitCode::kUsage,
                cat(kVariable, ": unknown hook '", name,
                    "' (checkpoint-delay-ms, step-delay-ms, slow-trainer, slow-factor, leave-delay-ms, "
                    "perturb-replica-step, opaque-backend, ranks-per-node, fill-disk)"));
  }
}

}  // namespace

TestHooks parse_test_hooks(std::string_view text) {
  TestHooks hooks;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (entry.empty()) continue;
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos) {
      throw Error(ExitCode::kUsage, cat(kVariable, ": expected name=value, got '", entry, "'"));
    }
    set(hooks, entry.substr(0, equals), entry.substr(equals + 1));
  }
  return hooks;
}

TestHooks take_test_hooks() {
  const char* value = std::getenv(kVariable);
  if (value == nullptr) return TestHooks{};
  const TestHooks hooks = parse_test_hooks(value);
  ::unsetenv(kVariable);  // taken: the job refuses to start while it is set
  return hooks;
}

}  // namespace pstrain::faults
