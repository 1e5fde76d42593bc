#pragma once
// A whole string as a number, parsed in one place: what the user typed on a command line, in a config file, a
// model file or an environment variable. The value when all of `text` is one number of type T (as the C library's
// strtod/strtoll/strtoull read it, so "1e-3" and " 5" are numbers), finite for floating types and in T's range;
// nothing otherwise (empty, trailing characters, a sign on an unsigned type, overflow, NaN or infinity). Callers
// name what they expected in their own message.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace pstrain {

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
  const std::string terminated(text);  // strto* read up to a terminating zero
  const char* begin = terminated.c_str();
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const T value =
        std::is_same_v<T, float> ? static_cast<T>(std::strtof(begin, &end)) : static_cast<T>(std::strtod(begin, &end));
    if (terminated.empty() || end != begin + terminated.size() || errno == ERANGE || !std::isfinite(value)) {
      return std::nullopt;
    }
    return value;
  } else if constexpr (std::is_signed_v<T>) {
    const long long value = std::strtoll(begin, &end, 10);
    if (terminated.empty() || end != begin + terminated.size() || errno == ERANGE ||
        value < static_cast<long long>(std::numeric_limits<T>::min()) ||
        value > static_cast<long long>(std::numeric_limits<T>::max())) {
      return std::nullopt;
    }
    return static_cast<T>(value);
  } else {
    // strtoull takes "-1" as the largest value: a count typed as -1 is a mistake, not a huge count.
    if (terminated.find('-') != std::string::npos) return std::nullopt;
    const unsigned long long value = std::strtoull(begin, &end, 10);
    if (terminated.empty() || end != begin + terminated.size() || errno == ERANGE ||
        value > static_cast<unsigned long long>(std::numeric_limits<T>::max())) {
      return std::nullopt;
    }
    return static_cast<T>(value);
  }
}

}  // namespace pstrain
