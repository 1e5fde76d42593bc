#pragma once
// What evaluate, predict and export share on the command line: parsing with Boost.Program_options into a
// variables_map (Error(kUsage) naming the flag), --help, and the flags that name the model of a pass folder
// written before pass folders named their own (saved_model.h's ModelChoice).
#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "inference/saved_model.h"

namespace pstrain::inference {

// --model NAME, --model-file FILE and the preset options, as the trainer spells them.
boost::program_options::options_description model_choice_options();
ModelChoice resolve_model_choice(const boost::program_options::variables_map& values);

// The ranks an MPI launcher (mpirun, srun --mpi=pmix) started this process as, from its environment; 0 when no
// launcher started it. Read before MPI is initialised: a command started without a launcher runs without MPI.
int launched_ranks();

// Parses argv (argv[0] is the subcommand) with `flags` and one positional PASS_FOLDER (`positional`, may be
// null). Returns nullopt after printing the help for --help. Error(kUsage) when started as several MPI ranks,
// unless `several_ranks` (evaluate, which shares the work among them).
std::optional<boost::program_options::variables_map> parse_command(
    int argc, char** argv, const std::string& usage, const boost::program_options::options_description& flags,
    const char* positional, bool several_ranks = false);

// Error(kOutput) naming `flag` and the path when an output file cannot go there: it exists already (pstrain never
// replaces a file) or its folder does not exist.
void check_new_output(const std::string& flag, const std::filesystem::path& path);

// A positive whole number from flag `name`; `fallback` when absent.
std::size_t positive_flag(const boost::program_options::variables_map& values, const std::string& name,
                          std::size_t fallback);

}  // namespace pstrain::inference
