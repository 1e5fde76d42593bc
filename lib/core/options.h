#pragma once
// Layered configuration through Boost.ProgramOptions: command line > PSTRAIN_* environment > INI file.
//
// Every long option --some-flag can also be set as PSTRAIN_SOME_FLAG or as `some-flag = value` in the INI file
// named by --config (itself settable as PSTRAIN_CONFIG). Unknown flags, unknown PSTRAIN_* variables and unknown
// keys in the file are errors (ExitCode::kUsage, with "did you mean" and the file's line), so a typo never silently
// falls back to a default. The project's own variables that are not flags (PSTRAIN_BIN, ...) are ignored.
#include <boost/program_options.hpp>
#include <string>

namespace pstrain {

struct LayeredOptions {
  boost::program_options::variables_map values;
  bool help_requested = false;
  bool version_requested = false;
};

// `description` holds the program's own options; --help, --version and --config are added here.
// `environment` is a null-terminated array like environ.
LayeredOptions parse_layered_options(const boost::program_options::options_description& description, int argc,
                                     const char* const* argv, const char* const* environment,
                                     const std::string& env_prefix = "PSTRAIN_");

// Whether `variable` is one of the project's own PSTRAIN_* variables that are not flags (PSTRAIN_BIN,
// PSTRAIN_CACHE_DIR, ...; the list and the rule are in options.cc): programs ignore them.
bool is_tool_variable(const std::string& variable);

// "did you mean --hidden?" for a mistyped option name ("hiden"), or "" when no option is close.
std::string did_you_mean(const boost::program_options::options_description& description, const std::string& name);

// --help, --version and --config, which parse_layered_options adds to every program's options.
const boost::program_options::options_description& general_options();

// PSTRAIN_SOME_FLAG -> "some-flag"; returns "" for variables without the prefix.
std::string environment_name_to_option(const std::string& variable, const std::string& env_prefix);

// The resolved values as an INI file that --config accepts (the saved configuration of a run).
std::string to_ini(const boost::program_options::variables_map& values);

// error.what() for Boost.ProgramOptions errors, made safe: Boost 1.74 fills the %placeholders% of its messages
// in a loop that never ends when the user's text contains the placeholder itself (a value or a key reading
// "%value%" hung pstrain). Percent signs of the user's text read %25 in the message. Use this, never what().
std::string describe(const boost::program_options::error& error);

}  // namespace pstrain
