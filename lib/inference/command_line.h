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

// Whether an MPI launcher (mpirun, srun --mpi=pmix) started this process, from its environment: a command started
// without one runs without MPI.
bool started_by_mpi_launcher();

// How a command runs under an MPI launcher.
struct CommandRanks {
  bool several = false;    // it shares its work among several ranks (evaluate); else several ranks are refused
  bool print_help = true;  // this rank prints --help (rank 0 of several)
};

// Parses argv (argv[0] is the subcommand) with `flags` and one positional PASS_FOLDER (`positional`, may be
// null). Returns nullopt after --help (printed where `ranks.print_help`). Error(kUsage) when started as several
// MPI ranks, unless `ranks.several`.
std::optional<boost::program_options::variables_map> parse_command(
    int argc, char** argv, const std::string& usage, const boost::program_options::options_description& flags,
    const char* positional, CommandRanks ranks = {});

// Error(kOutput) naming `flag` and the path when an output file cannot go there: it exists already (pstrain never
// replaces a file) or its folder does not exist.
void check_new_output(const std::string& flag, const std::filesystem::path& path);

// A positive whole number from flag `name`; `fallback` when absent.
std::size_t positive_flag(const boost::program_options::variables_map& values, const std::string& name,
                          std::size_t fallback);

}  // namespace pstrain::inference
