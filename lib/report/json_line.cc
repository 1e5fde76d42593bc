#include "report/json_line.h"

#include <cmath>
#include <cstdint>

namespace pstrain::report {

namespace {

constexpr auto kInvalidUtf8 = nlohmann::json::error_handler_t::replace;  // U+FFFD, as Python's errors="replace"

// A double that is a whole number reads back exactly from its integer text (below 2^53); -0.0 keeps its sign.
bool is_whole(double value) {
  return std::trunc(value) == value && std::fabs(value) < 9007199254740992.0 && !(value == 0 && std::signbit(value));
}

// Scalars through nlohmann's serializer; objects and arrays laid out here with ", " and ": ", which its compact form
// (",", ":") lacks and readers of metrics.jsonl (grep '"trainers": 2') expect.
void append(std::string& out, const OrderedJson& value) {
  if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : value.items()) {
      out += first ? "" : ", ";
      first = false;
      out += json_quoted(key);
      out += ": ";
      append(out, item);
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
      out += i ? ", " : "";
      append(out, value[i]);
    }
    out += ']';
  } else if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    out += "null";
  } else if (value.is_number_float() && is_whole(value.get<double>())) {
    out += std::to_string(static_cast<std::int64_t>(value.get<double>()));  // 13, as metrics.jsonl always had it
  } else {
    out += value.dump(-1, ' ', false, kInvalidUtf8);
  }
}

}  // namespace

std::string json_line(const OrderedJson& value) {
  std::string out;
  append(out, value);
  return out;
}

std::string json_document(const OrderedJson& value) {
  return value.dump(2, ' ', false, kInvalidUtf8) + "\n";
}

std::string json_quoted(const std::string& text) {
  return OrderedJson(text).dump(-1, ' ', false, kInvalidUtf8);
}

std::optional<nlohmann::json> parse_json_object(const std::string& line) {
  nlohmann::json value = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) return std::nullopt;
  return value;
}

std::optional<double> number_field(const nlohmann::json& object, const std::string& key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_number()) return std::nullopt;
  const double value = found->get<double>();
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace pstrain::report
