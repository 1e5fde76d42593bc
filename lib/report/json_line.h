#pragma once
// The JSON that pstrain writes and reads back (metrics.jsonl lines, provenance.json, pstrain-sweep's report.json), on
// nlohmann::json (Debian: nlohmann-json3-dev): strings keep their UTF-8 text (a byte sequence that is not UTF-8
// becomes U+FFFD instead of ending the run), and floating-point numbers are written in the shortest form that reads
// back as the same double (nlohmann's to_chars, at most max_digits10 = 17 significant digits).
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace pstrain::report {

// An object whose keys stay in the order they were added (metrics.jsonl's columns).
using OrderedJson = nlohmann::ordered_json;

// One line, as metrics.jsonl has always held them: {"pass": 0, "mode": "sync", "h": [1, 2]} (", " and ": " between
// items, no newline; a double that is a whole number without ".0"). Non-finite numbers become null (JSON has no
// NaN).
std::string json_line(const OrderedJson& value);
// The whole document, indented by 2 (provenance.json), ending in a newline.
std::string json_document(const OrderedJson& value);
// A string as a JSON string literal, quotes included: also a YAML double-quoted scalar (pstrain-sweep emit).
std::string json_quoted(const std::string& text);

// One line of a .jsonl file as an object; nullopt for anything else (a torn last line, a stray edit, a line that is
// not an object). Never throws.
std::optional<nlohmann::json> parse_json_object(const std::string& line);

// The number under `key` as a double; nullopt when absent, null, not a number or not finite.
std::optional<double> number_field(const nlohmann::json& object, const std::string& key);

}  // namespace pstrain::report
