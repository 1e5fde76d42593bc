#include "core/options.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace po = boost::program_options;

namespace pstrain {

std::string environment_name_to_option(const std::string& variable, const std::string& env_prefix) {
  if (variable.rfind(env_prefix, 0) != 0) return "";
  std::string name = variable.substr(env_prefix.size());
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return c == '_' ? '-' : static_cast<char>(std::tolower(c)); });
  return name;
}

namespace {

// The rule for PSTRAIN_* variables, stated once (docs/running.md): PSTRAIN_<FLAG> sets --<flag>; the names
// below belong to the project's scripts and build (they choose binaries, caches and build options, never a flag),
// and the option parser ignores them (the training job then refuses PSTRAIN_TEST_HOOKS on purpose, with its own
// message: job/job_start.cc); any other PSTRAIN_* variable is an error, so that a mistyped flag is never ignored.
// tests/unit/core/documented_variables_test.sh checks that every PSTRAIN_* name in the docs and scripts is one or the
// other.
constexpr std::array<std::string_view, 21> kToolVariables =
    {"PSTRAIN_BIN",
     "PSTRAIN_FLAGS",
     "PSTRAIN_CACHE_DIR",
     "PSTRAIN_DATA",
     "PSTRAIN_SANITIZERS",
     "PSTRAIN_CCACHE",
     "PSTRAIN_CCACHE_DIR",  // scripts: tests/run_all.sh, sanitize/run.sh
     "PSTRAIN_BUILD_TESTS",
     "PSTRAIN_CUDA",
     "PSTRAIN_CUDA_MODE",
     "PSTRAIN_FUZZ",  // CMake options
     "PSTRAIN_SANITIZE",
     "PSTRAIN_TSAN",
     "PSTRAIN_SMPI",        // CMake option: the SimGrid dry-run build (benchmarks/scale/)
     "PSTRAIN_WERROR",      // CMake option: warnings as errors (CI)
     "PSTRAIN_TEST_HOOKS",  // the test suite's fault injection: pstrain-faults takes it, pstrain refuses it
     "PSTRAIN_FASHION_MNIST",
     "PSTRAIN_MODULEFILES_DIR",
     "PSTRAIN_MODULEFILE_SUBDIR",
     "PSTRAIN_CUDNN_LIBRARY",  // which cuDNN the GPU backend opens (compute/cuda/cudnn_api.h), like LD_LIBRARY_PATH
     "PSTRAIN_ROOT"};          // what environment modules commonly set for a package named pstrain

// Edit distance between two option names, for "did you mean".
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

const po::options_description& general_options() {
  static const po::options_description general = [] {
    po::options_description common("General");
    common.add_options()("help,h",
                         "print this help and exit")("version",
                                                     "print the version and what it was built with, and exit")(
        "config", po::value<std::string>(),
        "INI file with `flag = value` lines (lowest precedence; a run's config.ini is one)");
    return common;
  }();
  return general;
}

bool is_tool_variable(const std::string& variable) {
  return std::find(kToolVariables.begin(), kToolVariables.end(), variable) != kToolVariables.end();
}

std::string did_you_mean(const po::options_description& description, const std::string& name) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& option : description.options()) {
    const std::string& candidate = option->long_name();
    const std::size_t d = distance(name, candidate);
    const bool prefix = candidate.rfind(name, 0) == 0 && name.size() >= 3;
    if (d < best_distance || (prefix && best.empty())) {
      best = candidate;
      best_distance = prefix ? std::min(d, best_distance) : d;
    }
  }
  return best.empty() ? std::string() : cat("did you mean --", best, "?");
}

namespace {

po::options_description with_common_options(const po::options_description& description) {
  po::options_description all;
  all.add(general_options()).add(description);
  return all;
}

// Parses the environment strictly: a PSTRAIN_* variable that names no option is an error.
po::parsed_options parse_environment_strict(const po::options_description& all, const char* const* environment,
                                            const std::string& env_prefix) {
  po::parsed_options parsed(&all);
  for (const char* const* entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string::npos) continue;
    const std::string variable = text.substr(0, equals);
    const std::string name = environment_name_to_option(variable, env_prefix);
    if (name.empty() || is_tool_variable(variable)) continue;
    if (all.find_nothrow(name, false) == nullptr || name == "help" || name == "version") {
      const std::string hint = did_you_mean(all, name);
      throw Error(ExitCode::kUsage, cat("unknown environment variable ", variable, " (no option --", name, "; ",
                                        hint.empty() ? "" : hint + " ", "see --help)"));
    }
    po::option option;
    option.string_key = name;
    option.value.push_back(text.substr(equals + 1));
    option.original_tokens = {variable};
    parsed.options.push_back(option);
  }
  return parsed;
}

}  // namespace

namespace {

// Where each key of an INI file is set (its line), checking every line first so that an error names FILE:LINE:
// Boost's parser names neither.
std::map<std::string, int> check_ini_lines(const std::string& path, const po::options_description& all) {
  std::ifstream file(path);
  if (!file) throw Error(ExitCode::kUsage, cat("cannot read config file ", path));
  std::map<std::string, int> lines;
  std::string text;
  for (int number = 1; std::getline(file, text); ++number) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos || text[first] == '#' || text[first] == ';') continue;
    const auto equals = text.find('=');
    const std::string left = equals == std::string::npos ? text : text.substr(0, equals);
    const auto key_first = left.find_first_not_of(" \t");
    const std::string key = key_first == std::string::npos
                                ? std::string()
                                : left.substr(key_first, left.find_last_not_of(" \t") - key_first + 1);
    if (text[first] == '[' || equals == std::string::npos || key.empty()) {
      throw Error(ExitCode::kUsage, cat(path, ":", number, ": expected 'flag = value', not '", text, "'"));
    }
    if (all.find_nothrow(key, false) == nullptr || key == "help" || key == "version" || key == "config") {
      const std::string hint = did_you_mean(all, key);
      throw Error(ExitCode::kUsage,
                  cat(path, ":", number, ": unknown key '", key, "'", hint.empty() ? "" : "; ", hint));
    }
    if (lines.count(key) != 0) {
      throw Error(ExitCode::kUsage,
                  cat(path, ":", number, ": '", key, "' is set twice (first on line ", lines[key], ")"));
    }
    lines[key] = number;
  }
  return lines;
}

}  // namespace

LayeredOptions parse_layered_options(const po::options_description& description, int argc, const char* const* argv,
                                     const char* const* environment, const std::string& env_prefix) {
  const po::options_description all = with_common_options(description);
  LayeredOptions result;
  std::string file_path;
  std::map<std::string, int> file_lines;  // key -> line of the INI file
  std::set<std::string> given_before_file;
  try {
    // po::store keeps the first value stored for a key, so storing in precedence order gives
    // command line > environment > file.
    po::store(po::command_line_parser(argc, argv).options(all).run(), result.values);
    po::store(parse_environment_strict(all, environment, env_prefix), result.values);
    if (result.values.count("config")) {
      file_path = result.values["config"].as<std::string>();
      for (const auto& [key, value] : result.values) {
        if (!value.defaulted()) given_before_file.insert(key);
      }
      file_lines = check_ini_lines(file_path, all);
      std::ifstream file(file_path);
      po::store(po::parse_config_file(file, all, /*allow_unregistered=*/false), result.values);
    }
    result.help_requested = result.values.count("help") > 0;
    result.version_requested = result.values.count("version") > 0;
    if (!result.help_requested && !result.version_requested) po::notify(result.values);
  } catch (const po::unknown_option& error) {
    std::string name = error.get_option_name();
    name.erase(0, name.find_first_not_of('-'));
    const std::string hint = did_you_mean(all, name);
    throw Error(ExitCode::kUsage, cat(describe(error), hint.empty() ? "" : "; ", hint, " (see --help)"));
  } catch (const po::error& error) {
    // A bad value that came from the file: name the file and line.
    std::string where;
    if (const auto* named = dynamic_cast<const po::error_with_option_name*>(&error)) {
      std::string name = named->get_option_name();
      name.erase(0, name.find_first_not_of('-'));
      if (file_lines.count(name) != 0 && given_before_file.count(name) == 0) {
        where = cat(file_path, ":", file_lines[name], ": ");
      }
    }
    throw Error(ExitCode::kUsage, cat(where, describe(error), " (see --help)"));
  }
  return result;
}

namespace {

// Reaches the substitutions Boost keeps protected (a derived class may name them, and a pointer to the member
// then works on any error_with_option_name).
struct SubstitutionAccess : po::error_with_option_name {
  static std::map<std::string, std::string>& of(po::error_with_option_name& error) {
    return error.*(&SubstitutionAccess::m_substitutions);
  }
};

}  // namespace

std::string describe(const po::error& error) {
  const auto* named = dynamic_cast<const po::error_with_option_name*>(&error);
  if (named == nullptr) return error.what();
  po::error_with_option_name copy = *named;  // what() caches its message in the object; leave the original alone
  for (auto& [placeholder, text] : SubstitutionAccess::of(copy)) {
    std::string safe;
    for (const char c : text) safe += c == '%' ? std::string("%25") : std::string(1, c);
    text = safe;
  }
  return copy.what();
}

namespace {

std::string any_to_string(const boost::any& value) {
  if (const auto* s = boost::any_cast<std::string>(&value)) return *s;
  if (const auto* i = boost::any_cast<int>(&value)) return std::to_string(*i);
  if (const auto* u = boost::any_cast<unsigned>(&value)) return std::to_string(*u);
  if (const auto* l = boost::any_cast<long>(&value)) return std::to_string(*l);
  if (const auto* ul = boost::any_cast<unsigned long>(&value)) return std::to_string(*ul);
  if (const auto* ll = boost::any_cast<long long>(&value)) return std::to_string(*ll);
  if (const auto* ull = boost::any_cast<unsigned long long>(&value)) return std::to_string(*ull);
  if (const auto* b = boost::any_cast<bool>(&value)) return *b ? "true" : "false";
  std::ostringstream out;
  out.precision(9);
  if (const auto* f = boost::any_cast<float>(&value)) {
    out << *f;
    return out.str();
  }
  if (const auto* d = boost::any_cast<double>(&value)) {
    out << *d;
    return out.str();
  }
  return "?";
}

}  // namespace

std::string to_ini(const po::variables_map& values) {
  std::ostringstream out;
  out << "# resolved pstrain configuration; reusable with --config\n";
  for (const auto& [name, value] : values) {
    if (name == "config" || name == "help" || name == "version" || value.empty()) continue;
    out << name << " = " << any_to_string(value.value()) << '\n';
  }
  return out.str();
}

}  // namespace pstrain
