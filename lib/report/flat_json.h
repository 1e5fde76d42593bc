#pragma once
// Reads one line of metrics.jsonl: a flat JSON object of numbers, strings, null and arrays (kept as raw text).
// Enough for what pstrain writes, with no JSON library.
#include <map>
#include <optional>
#include <string>

namespace pstrain::report {

// key -> value text (strings unescaped, numbers/null/arrays as written). nullopt when the line is not a flat
// JSON object (a torn last line, a stray edit).
std::optional<std::map<std::string, std::string>> parse_flat_json(const std::string& line);

// The number under `key`, or nullopt when absent, null or not a number.
std::optional<double> number_field(const std::map<std::string, std::string>& object, const std::string& key);

}  // namespace pstrain::report
