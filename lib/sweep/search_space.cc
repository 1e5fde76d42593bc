#include "sweep/search_space.h"

#include <cctype>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"
#include "sweep/pstrain_flags.h"

namespace pstrain::sweep {

namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// "a | b | c" -> {"a", "b", "c"}; an empty alternative is an error, never silently dropped.
std::vector<std::string> split_alternatives(const std::string& text, const std::string& where) {
  std::vector<std::string> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, '|')) values.push_back(trim(item));
  if (!text.empty() && text.back() == '|') values.push_back("");
  if (values.empty()) throw Error(ExitCode::kUsage, cat(where, ": empty value list"));
  for (const auto& value : values) {
    if (value.empty()) throw Error(ExitCode::kUsage, cat(where, ": empty value in '", text, "'"));
  }
  return values;
}

double parse_number(const std::string& text, const std::string& where) {
  const std::optional<double> value = pstrain::parse_number<double>(text);
  if (!value) throw Error(ExitCode::kUsage, cat(where, ": '", text, "' is not a finite number"));
  return *value;
}

long long parse_integer(const std::string& text, const std::string& where) {
  const std::optional<long long> value = pstrain::parse_number<long long>(text);
  if (!value) throw Error(ExitCode::kUsage, cat(where, ": '", text, "' is not an integer"));
  return *value;
}

// "uniform(0.8, 0.99)" and friends.
RandomEntry parse_distribution(const std::string& flag, const std::string& text, const std::string& where) {
  RandomEntry entry;
  entry.flag = flag;
  const auto open = text.find('(');
  if (open == std::string::npos || text.back() != ')') {
    throw Error(ExitCode::kUsage,
                cat(where, ": '", text, "' is not uniform(lo, hi), loguniform(lo, hi), int(lo, hi) or choice(a | b)"));
  }
  const std::string kind = trim(text.substr(0, open));
  const std::string inside = trim(text.substr(open + 1, text.size() - open - 2));
  if (kind == "choice") {
    entry.distribution = Distribution::kChoice;
    entry.choices = split_alternatives(inside, where);
    return entry;
  }
  const auto comma = inside.find(',');
  if (comma == std::string::npos || inside.find(',', comma + 1) != std::string::npos) {
    throw Error(ExitCode::kUsage, cat(where, ": ", kind, "(...) takes two bounds: ", kind, "(lo, hi)"));
  }
  const std::string lo = trim(inside.substr(0, comma));
  const std::string hi = trim(inside.substr(comma + 1));
  if (kind == "int") {
    entry.distribution = Distribution::kInt;
    entry.int_lo = parse_integer(lo, where);
    entry.int_hi = parse_integer(hi, where);
    if (entry.int_lo >= entry.int_hi) {
      throw Error(ExitCode::kUsage, cat(where, ": int(", lo, ", ", hi, ") needs lo < hi"));
    }
    return entry;
  }
  if (kind != "uniform" && kind != "loguniform") {
    throw Error(ExitCode::kUsage, cat(where, ": unknown distribution '", kind, "' (uniform, loguniform, int, choice)"));
  }
  entry.distribution = kind == "uniform" ? Distribution::kUniform : Distribution::kLogUniform;
  entry.lo = parse_number(lo, where);
  entry.hi = parse_number(hi, where);
  if (entry.lo >= entry.hi) throw Error(ExitCode::kUsage, cat(where, ": ", kind, "(", lo, ", ", hi, ") needs lo < hi"));
  if (kind == "loguniform" && entry.lo <= 0) {
    throw Error(ExitCode::kUsage, cat(where, ": loguniform(", lo, ", ", hi, ") needs positive bounds"));
  }
  return entry;
}

enum class Section { kNone, kFixed, kGrid, kRandom };

struct Literal {
  std::string flag;
  std::string value;
  std::string where;
};

// Whether `message` names --flag itself (not a longer flag that starts with it: --lr is not --lr-points).
bool names_flag(const std::string& message, const std::string& flag) {
  const std::string needle = "--" + flag;
  for (auto at = message.find(needle); at != std::string::npos; at = message.find(needle, at + 1)) {
    const std::size_t after = at + needle.size();
    if (after == message.size() ||
        !(std::isalnum(static_cast<unsigned char>(message[after])) || message[after] == '-')) {
      return true;
    }
  }
  return false;
}

std::string error_of(const Flags& flags, const std::string& where) {
  try {
    check_flag_values(flags, where);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// Flags depend on each other (--lr-schedule piecewise needs --lr-points), so a value is checked among the other
// [fixed] flags, not alone, and is fine when one value of another [grid] flag completes them (piecewise with the
// points in [grid]). It is blamed when the [fixed] flags pass without it, or when they fail without it for another
// reason and the error with it names its flag. Otherwise the fault is not attributable to one line and is left to
// the check of the expanded sets, which names the set.
void check_literals(const std::vector<Literal>& literals, const std::vector<FixedEntry>& fixed,
                    const std::vector<GridEntry>& grid) {
  for (const Literal& literal : literals) {
    Flags context;
    for (const FixedEntry& entry : fixed) {
      if (entry.flag != literal.flag) context.emplace_back(entry.flag, entry.value);
    }
    Flags with_value = context;
    with_value.emplace_back(literal.flag, literal.value);
    const std::string with_error = error_of(with_value, literal.where);
    if (with_error.empty()) continue;
    bool completed = false;
    for (const GridEntry& entry : grid) {
      if (entry.flag == literal.flag) continue;
      for (const std::string& value : entry.values) {
        Flags completed_flags = with_value;
        completed_flags.emplace_back(entry.flag, value);
        completed = completed || error_of(completed_flags, literal.where).empty();
      }
    }
    if (completed) continue;
    const std::string without_error = error_of(context, literal.where);
    const auto strip = [&](const std::string& message) { return message.substr(literal.where.size()); };
    if (without_error.empty() || (names_flag(with_error, literal.flag) && strip(with_error) != strip(without_error))) {
      throw Error(ExitCode::kUsage, with_error);
    }
  }
}

}  // namespace

SearchSpace parse_search_space(const std::string& text, const std::string& source) {
  SearchSpace space;
  space.source = source;
  std::vector<Literal> literals;
  Section section = Section::kNone;
  std::map<std::string, int> first_line;  // flag -> line it was first given on (any section)
  std::stringstream stream(text);
  std::string raw;
  int line_number = 0;
  while (std::getline(stream, raw)) {
    ++line_number;
    const std::string where = cat(source, ":", line_number);
    const std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line == "[fixed]")
        section = Section::kFixed;
      else if (line == "[grid]")
        section = Section::kGrid;
      else if (line == "[random]")
        section = Section::kRandom;
      else
        throw Error(ExitCode::kUsage,
                    cat(where, ": unknown section ", line, " (expected [fixed], [grid] or [random])"));
      continue;
    }
    const auto equals = line.find('=');
    if (equals == std::string::npos)
      throw Error(ExitCode::kUsage, cat(where, ": expected 'flag = value', got '", line, "'"));
    if (section == Section::kNone) {
      throw Error(ExitCode::kUsage, cat(where, ": '", line, "' comes before any [fixed], [grid] or [random] section"));
    }
    std::string flag = trim(line.substr(0, equals));
    if (flag.rfind("--", 0) == 0) flag = flag.substr(2);
    const std::string value = trim(line.substr(equals + 1));
    if (flag.empty()) throw Error(ExitCode::kUsage, cat(where, ": missing flag name before '='"));
    check_flag_name(flag, where);
    if (const auto seen = first_line.find(flag); seen != first_line.end()) {
      throw Error(ExitCode::kUsage, cat(where, ": --", flag, " is already given on line ", seen->second,
                                        "; a flag belongs to one section, once"));
    }
    first_line[flag] = line_number;
    if (value.empty()) throw Error(ExitCode::kUsage, cat(where, ": empty value list for --", flag));

    // Every literal value is checked by pstrain's own rules once the file is read (check_literals), so that a bad
    // one names its line, not a run.
    const auto check_values = [&](const std::vector<std::string>& values) {
      for (const auto& one : values) literals.push_back({flag, one, where});
    };
    switch (section) {
      case Section::kFixed: {
        if (value.find('|') != std::string::npos) {
          throw Error(ExitCode::kUsage, cat(where, ": [fixed] takes one value; put alternatives in [grid]"));
        }
        check_values({value});
        space.fixed.push_back({flag, value, line_number});
        break;
      }
      case Section::kGrid: {
        GridEntry entry{flag, split_alternatives(value, where), line_number};
        check_values(entry.values);
        space.grid.push_back(std::move(entry));
        break;
      }
      case Section::kRandom: {
        RandomEntry entry = parse_distribution(flag, value, where);
        entry.line = line_number;
        if (entry.distribution == Distribution::kChoice) check_values(entry.choices);
        space.random.push_back(std::move(entry));
        break;
      }
      case Section::kNone: break;
    }
  }
  if (space.grid.empty() && space.random.empty()) {
    throw Error(ExitCode::kUsage, cat(source, ": empty search space: no [grid] or [random] entries"));
  }
  check_literals(literals, space.fixed, space.grid);
  return space;
}

SearchSpace load_search_space(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::kInputData, cat("cannot read search space ", path.string()));
  std::stringstream contents;
  contents << in.rdbuf();
  return parse_search_space(contents.str(), path.string());
}

}  // namespace pstrain::sweep
