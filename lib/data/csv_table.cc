#include "data/csv_table.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>

#include "core/error.h"

namespace pstrain::data {

namespace {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(trim(std::string_view(line).substr(start, comma == std::string::npos ? comma : comma - start)));
    if (comma == std::string::npos) return fields;
    start = comma + 1;
  }
}

std::optional<double> number(const std::string& field) {
  double value = 0;
  const char* begin = field.data() + (!field.empty() && field[0] == '+' ? 1 : 0);
  const auto [end, error] = std::from_chars(begin, field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size() || field.empty()) return std::nullopt;
  return value;
}

// A header names columns: some field of it is text. (An empty field is a missing value of a data line.)
bool is_header(const std::vector<std::string>& fields) {
  for (const std::string& field : fields) {
    if (!field.empty() && !number(field)) return true;
  }
  return false;
}

std::string unquoted(const std::string& field) {
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') return field.substr(1, field.size() - 2);
  return field;
}

std::size_t label_index_of(const std::string& spec, const std::vector<std::string>& header, std::size_t columns,
                           const std::string& file) {
  if (spec == "last") return columns - 1;
  if (spec == "first") return 0;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == spec) return i;
  }
  std::size_t index = 0;
  const auto [end, error] = std::from_chars(spec.data(), spec.data() + spec.size(), index);
  if (error == std::errc() && end == spec.data() + spec.size() && !spec.empty()) {
    if (index < columns) return index;
    throw Error(ExitCode::kUsage,
                cat("--label-column ", spec, ": ", file, " has only ", columns, " columns (0 to ", columns - 1, ")"));
  }
  throw Error(ExitCode::kUsage, cat("--label-column '", spec, "' is not a column of ", file,
                                    header.empty() ? " (it has no header line: give first, last or a 0-based index)"
                                                   : " (not a name in its header line)"));
}

// Parses one data line into `samples`; `where` is FILE:LINE for messages.
void add_row(const std::vector<std::string>& fields, const std::string& where, CsvSamples& samples) {
  for (std::size_t column = 0; column < fields.size(); ++column) {
    const std::string& field = fields[column];
    if (column == samples.label_index) {
      std::int64_t label = -1;
      const char* begin = field.data() + (!field.empty() && field[0] == '+' ? 1 : 0);
      const auto [end, error] = std::from_chars(begin, field.data() + field.size(), label);
      if (error != std::errc() || end != field.data() + field.size() || field.empty() || label < 0 ||
          label > std::numeric_limits<std::int32_t>::max()) {
        throw Error(ExitCode::kInputData, cat(where, ": label '", field, "' (column ", column,
                                              ") is not a class index (a whole number 0, 1, 2, ...)"));
      }
      samples.labels.push_back(static_cast<std::int32_t>(label));
      continue;
    }
    const std::optional<double> value = number(field);
    if (!value || !std::isfinite(*value) || std::fabs(*value) > std::numeric_limits<float>::max()) {
      throw Error(ExitCode::kInputData,
                  cat(where, ": feature '", field, "' (column ", column, ") is not a finite number"));
    }
    samples.features.push_back(static_cast<float>(*value));
  }
}

}  // namespace

CsvSamples read_csv_samples(const std::filesystem::path& path, const std::string& label_column) {
  const std::string file = path.string();
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::kInputData, cat(file, ": cannot open the file (does it exist?)"));
  CsvSamples samples;
  std::size_t columns = 0;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (trim(line).empty()) continue;
    std::vector<std::string> fields = split_fields(line);
    const std::string where = cat(file, ":", number);
    if (columns == 0) {  // the first line that is not blank
      if (fields.size() < 2) {
        throw Error(ExitCode::kInputData, cat(where, ": ", fields.size(),
                                              " column; a sample needs at least one feature and a label "
                                              "(comma-separated)"));
      }
      columns = fields.size();
      if (is_header(fields)) {
        for (const std::string& field : fields) samples.header.push_back(unquoted(field));
      }
      samples.label_index = label_index_of(label_column, samples.header, columns, file);
      samples.feature_count = columns - 1;
      if (!samples.header.empty()) continue;
    }
    if (fields.size() != columns) {
      throw Error(ExitCode::kInputData, cat(where, ": ", fields.size(), " fields, but the first line has ", columns));
    }
    add_row(fields, where, samples);
  }
  if (in.bad()) throw Error(ExitCode::kInputData, cat(file, ": read error"));
  if (samples.labels.empty()) throw Error(ExitCode::kInputData, cat(file, ": no samples (no data lines)"));
  return samples;
}

}  // namespace pstrain::data
