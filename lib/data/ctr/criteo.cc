#include "data/ctr/criteo.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "core/error.h"

namespace pstrain::data::ctr {

namespace {

constexpr std::size_t kBadLinesKept = 5;

// What is wrong with a line: its column (1-based, 0 for the whole line) and why.
struct LineProblem {
  std::size_t column = 0;
  std::string reason;
};

std::string shown(std::string_view text) {
  constexpr std::size_t kShown = 40;
  return text.size() <= kShown ? std::string(text) : std::string(text.substr(0, kShown)) + "...";
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One hex id of 1 to 16 digits.
bool parse_hex(std::string_view text, std::uint64_t& id) {
  if (text.empty() || text.size() > 16) return false;
  id = 0;
  for (const char c : text) {
    const int digit = hex_digit(c);
    if (digit < 0) return false;
    id = (id << 4) | static_cast<std::uint64_t>(digit);
  }
  return true;
}

// The columns of one line, without copying.
std::size_t split_columns(std::string_view line, std::string_view* columns, std::size_t capacity) {
  std::size_t count = 0, begin = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', begin);
    if (count < capacity) columns[count] = line.substr(begin, tab == std::string_view::npos ? tab : tab - begin);
    ++count;
    if (tab == std::string_view::npos) return count;
    begin = tab + 1;
  }
}

std::string column_name(std::size_t column, bool labeled) {  // column: 0-based
  const std::size_t feature = labeled ? column : column + 1;
  if (feature == 0) return "label";
  if (feature <= kCriteoDense) return cat("I", feature);
  return cat("C", feature - kCriteoDense);
}

// Parses one line into `out` (appending one sample); on a problem, `out` is left as it was.
std::optional<LineProblem> parse_line(std::string_view line, bool labeled, CtrColumns& out) {
  std::string_view columns[kCriteoLabeledColumns + 1];
  const std::size_t expected = labeled ? kCriteoLabeledColumns : kCriteoLabeledColumns - 1;
  const std::size_t found = split_columns(line, columns, kCriteoLabeledColumns + 1);
  if (found != expected) {
    return LineProblem{0, cat("expected ", expected, " tab-separated columns (", labeled ? "label, " : "",
                              "13 integers, 26 categorical), found ", found)};
  }
  const std::size_t first = labeled ? 1 : 0;
  std::int32_t label = -1;
  if (labeled) {
    if (columns[0] != "0" && columns[0] != "1") {
      return LineProblem{1, cat("label '", shown(columns[0]), "' is not 0 or 1")};
    }
    label = columns[0] == "1" ? 1 : 0;
  }
  float dense[kCriteoDense];
  for (std::size_t j = 0; j < kCriteoDense; ++j) {
    const std::string_view text = columns[first + j];
    std::int64_t value = 0;
    if (!text.empty()) {
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size()) {
        return LineProblem{first + j + 1, cat("'", shown(text), "' is not a 64-bit integer")};
      }
    }
    dense[j] = criteo_dense_value(value);
  }
  std::size_t before[kCriteoFields];
  for (std::size_t f = 0; f < kCriteoFields; ++f) {
    before[f] = out.values[f].size();
    std::string_view text = columns[first + kCriteoDense + f];
    while (!text.empty()) {
      const std::size_t comma = text.find(',');
      std::uint64_t id = 0;
      if (!parse_hex(text.substr(0, comma), id)) {
        for (std::size_t g = 0; g <= f; ++g) out.values[g].resize(before[g]);
        return LineProblem{first + kCriteoDense + f + 1,
                           cat("'", shown(columns[first + kCriteoDense + f]),
                               "' is not a hexadecimal id of 1 to 16 digits (or several separated by ',')")};
      }
      out.values[f].push_back(id);
      text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
      if (comma != std::string_view::npos && text.empty()) {  // "ab," : a trailing separator
        for (std::size_t g = 0; g <= f; ++g) out.values[g].resize(before[g]);
        return LineProblem{first + kCriteoDense + f + 1, "ends with ',' (an empty id)"};
      }
    }
  }
  out.dense.insert(out.dense.end(), dense, dense + kCriteoDense);
  out.labels.push_back(label);
  for (std::size_t f = 0; f < kCriteoFields; ++f) out.offsets[f].push_back(out.values[f].size());
  ++out.samples;
  return std::nullopt;
}

}  // namespace

CtrLayout criteo_layout(const std::string& dataset) {
  CtrLayout layout;
  layout.dataset = dataset;
  for (std::size_t j = 1; j <= kCriteoDense; ++j) layout.dense_names.push_back(cat("I", j));
  for (std::size_t f = 1; f <= kCriteoFields; ++f) layout.field_names.push_back(cat("C", f));
  return layout;
}

float criteo_dense_value(std::int64_t x) {
  return static_cast<float>(std::log1p(static_cast<double>(std::max<std::int64_t>(x, 0))));
}

bool criteo_line_labeled(std::string_view line, const std::string& file) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view columns[1];
  const std::size_t found = split_columns(line, columns, 0);
  if (found == kCriteoLabeledColumns) return true;
  if (found == kCriteoLabeledColumns - 1) return false;
  throw Error(ExitCode::kInputData,
              cat(file,
                  ":1: expected 40 tab-separated columns (label, 13 integers, 26 categorical) or 39 (no "
                  "label), found ",
                  found, " (not the Criteo format?)"));
}

CriteoBlock parse_criteo_block(std::string_view text, std::uint64_t first_line, const CriteoParseOptions& options) {
  CriteoBlock block;
  std::uint64_t line_index = first_line;
  for (std::size_t begin = 0; begin < text.size(); ++line_index) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++block.lines;
    const std::optional<LineProblem> problem = parse_line(line, options.labeled, block.columns);
    if (!problem) {
      block.sample_lines.push_back(line_index);
      continue;
    }
    const std::string where = problem->column == 0 ? std::string()
                                                   : cat("column ", problem->column, " (",
                                                         column_name(problem->column - 1, options.labeled), "): ");
    if (!options.skip_bad) {
      throw Error(ExitCode::kInputData, cat(options.file, ":", line_index + 1, ": ", where, problem->reason,
                                            " (--skip-bad-lines leaves such lines out and counts them)"));
    }
    ++block.bad_lines;
    if (block.first_bad.size() < kBadLinesKept) block.first_bad.push_back({line_index + 1, where + problem->reason});
  }
  if (options.count_distinct) {
    block.distinct.resize(kCriteoFields);
    for (std::size_t f = 0; f < kCriteoFields; ++f) {
      for (const std::uint64_t id : block.columns.values[f]) block.distinct[f].add(id);
    }
  }
  return block;
}

}  // namespace pstrain::data::ctr
