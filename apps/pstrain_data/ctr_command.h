#pragma once
// pstrain-data's click-through-rate subcommands: criteo, movielens, synthetic-ctr (each in its own file), and
// what they share: their flags' parsing and the publication of a CTR data folder (data/ctr/ctr_shard.h).
#include <boost/program_options.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "staging_folder.h"

namespace pstrain_data {

bool is_ctr_command(std::string_view dataset);
// Runs `pstrain-data DATASET FLAGS...`; throws pstrain::Error.
void run_ctr_command(int argc, char** argv);

void convert_criteo(int argc, char** argv);
void convert_movielens(int argc, char** argv);
void generate_synthetic_ctr(int argc, char** argv);

// argv[2...] against `flags`; false when --help was printed (with `usage` first).
bool parse_ctr_flags(int argc, char** argv, const boost::program_options::options_description& flags, const char* usage,
                     boost::program_options::variables_map& values);
std::uint64_t ctr_count_flag(const boost::program_options::variables_map& values, const char* flag,
                             std::uint64_t fallback);
// A fraction in [0, 1) (0: none), `fallback` when not given.
double ctr_fraction_flag(const boost::program_options::variables_map& values, const char* flag, double fallback);

// Writes ctr_fields.tsv and ctr_conversion.txt into the staging folder, then the MANIFEST, and publishes them with
// the shards (`shard_names`, already in the staging folder).
void publish_ctr_folder(StagingFolder& staging, std::vector<std::string> shard_names, const std::string& fields_tsv,
                        const std::string& report);

}  // namespace pstrain_data
