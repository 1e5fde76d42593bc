#include "core/options.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
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

po::options_description with_common_options(const po::options_description& description) {
  po::options_description all;
  po::options_description common("General");
  common.add_options()("help,h", "print this help and exit")("version", "print the version and exit")(
      "config", po::value<std::string>(), "INI file with `flag = value` lines (lowest precedence)");
  all.add(common).add(description);
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
    if (name.empty()) continue;
    if (all.find_nothrow(name, false) == nullptr || name == "help" || name == "version") {
      throw Error(ExitCode::kUsage,
                  cat("unknown environment variable ", variable, " (no option --", name, "; see --help)"));
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

LayeredOptions parse_layered_options(const po::options_description& description, int argc, const char* const* argv,
                                     const char* const* environment, const std::string& env_prefix) {
  const po::options_description all = with_common_options(description);
  LayeredOptions result;
  try {
    // po::store keeps the first value stored for a key, so storing in precedence order gives
    // command line > environment > file.
    po::store(po::command_line_parser(argc, argv).options(all).run(), result.values);
    po::store(parse_environment_strict(all, environment, env_prefix), result.values);
    if (result.values.count("config")) {
      const std::string path = result.values["config"].as<std::string>();
      std::ifstream file(path);
      if (!file) throw Error(ExitCode::kUsage, cat("cannot read config file ", path));
      po::store(po::parse_config_file(file, all, /*allow_unregistered=*/false), result.values);
    }
    result.help_requested = result.values.count("help") > 0;
    result.version_requested = result.values.count("version") > 0;
    if (!result.help_requested && !result.version_requested) po::notify(result.values);
  } catch (const po::error& error) {
    throw Error(ExitCode::kUsage, cat(describe(error), " (see --help)"));
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
