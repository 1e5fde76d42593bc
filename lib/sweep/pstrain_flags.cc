#include "sweep/pstrain_flags.h"

#include <boost/program_options.hpp>

#include "config/train_config.h"
#include "core/error.h"
#include "core/options.h"

namespace po = boost::program_options;

namespace pstrain::sweep {

namespace {

// The flags a sweep may set: everything pstrain parses, so that its configuration resolves with every default.
const po::options_description& pstrain_options() {
  static const po::options_description options = config::train_options();
  return options;
}

po::variables_map parse(const Flags& flags, const std::string& where) {
  // Placeholders for the two flags the tool owns: pstrain requires them, the sweep fills them in per run.
  std::vector<std::string> args{"--data-dir", "DATA", "--output-dir", "OUTPUT"};
  for (const auto& [flag, value] : flags) {
    args.push_back("--" + flag);
    args.push_back(value);
  }
  po::variables_map values;
  try {
    po::store(po::command_line_parser(args).options(pstrain_options()).run(), values);
  } catch (const po::error& error) {
    throw Error(ExitCode::kUsage, cat(where, ": ", describe(error)));
  }
  return values;
}

}  // namespace

void check_flag_name(const std::string& flag, const std::string& where) {
  if (flag == "data-dir" || flag == "output-dir") {
    throw Error(ExitCode::kUsage, cat(where, ": --", flag, " is set by pstrain-sweep for every run; remove it"));
  }
  if (flag == "config") {
    throw Error(ExitCode::kUsage, cat(where, ": --config cannot be swept; list its flags instead"));
  }
  if (pstrain_options().find_nothrow(flag, false) == nullptr) {
    throw Error(ExitCode::kUsage, cat(where, ": '", flag, "' is not a pstrain flag (see pstrain --help)"));
  }
}

void check_flag_values(const Flags& flags, const std::string& where) {
  const po::variables_map values = parse(flags, where);
  try {
    (void)config::resolve_train_config(values);
  } catch (const Error& error) {
    throw Error(ExitCode::kUsage, cat(where, ": ", error.what()));
  } catch (const po::error& error) {
    throw Error(ExitCode::kUsage, cat(where, ": ", describe(error)));
  }
}

int passes_of(const Flags& flags) {
  const po::variables_map values = parse(flags, "passes");
  return static_cast<int>(values["passes"].as<long long>());
}

}  // namespace pstrain::sweep
