#include "sweep/sets.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "core/parse_number.h"

namespace fs = std::filesystem;

namespace pstrain::sweep {

std::string set_name(int id) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "set-%04d", id);
  return buffer;
}

fs::path run_dir(const fs::path& sweep_dir, int id) {
  return sweep_dir / "runs" / set_name(id);
}

std::string shell_quote(const std::string& word) {
  static const std::regex plain("[A-Za-z0-9_.,:/=+@%-]+");
  if (std::regex_match(word, plain)) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::vector<std::string> flags_to_args(const Flags& flags) {
  std::vector<std::string> args;
  for (const auto& [flag, value] : flags) {
    args.push_back("--" + flag);
    args.push_back(value);
  }
  return args;
}

std::string flags_to_shell(const Flags& flags) {
  std::string line;
  for (const auto& word : flags_to_args(flags)) {
    if (!line.empty()) line += ' ';
    line += shell_quote(word);
  }
  return line;
}

namespace {

std::string to_ini(const HyperparameterSet& set) {
  std::string text = cat("# ", set_name(set.id), ": pstrain --config accepts this file\n");
  for (const auto& [flag, value] : set.flags) text += cat(flag, " = ", value, "\n");
  return text;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error(ExitCode::kInputData, cat("cannot read ", path.string()));
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

std::string sets_txt(const std::vector<HyperparameterSet>& sets) {
  std::string text;
  for (const auto& set : sets) text += flags_to_shell(set.flags) + "\n";
  return text;
}

}  // namespace

void write_sets(const fs::path& sweep_dir, const std::vector<HyperparameterSet>& sets) {
  const std::string listing = sets_txt(sets);
  const fs::path listing_path = sweep_dir / "sets.txt";
  if (fs::exists(listing_path)) {
    if (read_text(listing_path) == listing) return;
    throw Error(ExitCode::kUsage, cat(sweep_dir.string(), " already holds a different sweep (sets.txt differs); ",
                                      "use a new --sweep-dir"));
  }
  ensure_writable_folder(sweep_dir / "sets");
  for (const auto& set : sets) write_file_atomically(sweep_dir / "sets" / (set_name(set.id) + ".ini"), to_ini(set));
  // sets.txt last: its presence means every set file is in place.
  write_file_atomically(listing_path, listing);
}

std::vector<HyperparameterSet> load_sets(const fs::path& sweep_dir) {
  const fs::path folder = sweep_dir / "sets";
  if (!fs::is_directory(folder) || !fs::exists(sweep_dir / "sets.txt")) {
    throw Error(ExitCode::kInputData,
                cat(sweep_dir.string(), " holds no sweep: run `pstrain-sweep grid` or `random` first"));
  }
  static const std::regex name("set-([0-9]{4,})\\.ini");
  std::vector<std::pair<int, fs::path>> files;
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, match, name)) files.emplace_back(std::stoi(match[1]), entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<HyperparameterSet> sets;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].first != static_cast<int>(i) + 1) {
      throw Error(ExitCode::kInputData, cat(folder.string(), ": sets are not numbered 1..N (",
                                            set_name(static_cast<int>(i) + 1), " missing)"));
    }
    HyperparameterSet set{files[i].first, {}};
    std::stringstream text(read_text(files[i].second));
    std::string line;
    int line_number = 0;
    while (std::getline(text, line)) {
      ++line_number;
      if (line.empty() || line[0] == '#') continue;
      const auto equals = line.find(" = ");
      if (equals == std::string::npos) {
        throw Error(ExitCode::kInputData, cat(files[i].second.string(), ":", line_number, ": expected 'flag = value'"));
      }
      set.flags.emplace_back(line.substr(0, equals), line.substr(equals + 3));
    }
    sets.push_back(std::move(set));
  }
  if (sets.empty()) throw Error(ExitCode::kInputData, cat(folder.string(), " holds no set-NNNN.ini files"));
  return sets;
}

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

SetSelection select_set(const EnvLookup& environment, std::size_t set_count) {
  struct Source {
    const char* variable;
    long long base;  // the number that means the first set
  };
  for (const Source source :
       {Source{"JOB_ID", 1}, Source{"JOB_COMPLETION_INDEX", 0}, Source{"SLURM_ARRAY_TASK_ID", 0}}) {
    const auto value = environment(source.variable);
    if (!value) continue;
    const std::optional<long long> number = parse_number<long long>(*value);
    const long long first = source.base, last = source.base + static_cast<long long>(set_count) - 1;
    if (!number || *number < first || *number > last) {
      throw Error(ExitCode::kUsage, cat(source.variable, "='", *value, "' is not a set number in ", first, "..", last,
                                        " (this sweep has ", set_count, " sets)"));
    }
    return {static_cast<std::size_t>(*number - source.base), cat(source.variable, "=", *value)};
  }
  throw Error(ExitCode::kUsage,
              "no set chosen: set JOB_ID (1-based), JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID "
              "(0-based), or pass --set N");
}

}  // namespace pstrain::sweep
