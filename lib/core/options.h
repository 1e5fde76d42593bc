#pragma once
// Layered configuration through Boost.ProgramOptions: command line > PSTRAIN_* environment > INI file.
//
// Every long option --some-flag can also be set as PSTRAIN_SOME_FLAG or as `some-flag = value` in the INI file
// named by --config (itself settable as PSTRAIN_CONFIG). Unknown flags, unknown PSTRAIN_* variables and unknown
// keys in the file are errors (ExitCode::kUsage), so a typo never silently falls back to a default.
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

// PSTRAIN_SOME_FLAG -> "some-flag"; returns "" for variables without the prefix.
std::string environment_name_to_option(const std::string& variable, const std::string& env_prefix);

// The resolved values as an INI file that --config accepts (the saved configuration of a run).
std::string to_ini(const boost::program_options::variables_map& values);

// error.what() for Boost.ProgramOptions errors, made safe: Boost 1.74 fills the %placeholders% of its messages
// in a loop that never ends when the user's text contains the placeholder itself (a value or a key reading
// "%value%" hung pstrain). Percent signs of the user's text read %25 in the message. Use this, never what().
std::string describe(const boost::program_options::error& error);

}  // namespace pstrain
