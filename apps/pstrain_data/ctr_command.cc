#include "ctr_command.h"

#include <iostream>

#include "core/error.h"
#include "core/files.h"
#include "core/options.h"
#include "core/parse_number.h"
#include "data/ctr_file_names.h"
#include "data/shard.h"
#include "output_folder.h"

namespace pstrain_data {

namespace po = boost::program_options;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;

bool is_ctr_command(std::string_view dataset) {
  return dataset == "criteo" || dataset == "movielens" || dataset == "synthetic-ctr";
}

void run_ctr_command(int argc, char** argv) {
  const std::string_view dataset = argv[1];
  if (dataset == "criteo") convert_criteo(argc, argv);
  if (dataset == "movielens") convert_movielens(argc, argv);
  if (dataset == "synthetic-ctr") generate_synthetic_ctr(argc, argv);
}

bool parse_ctr_flags(int argc, char** argv, const po::options_description& flags, const char* usage,
                     po::variables_map& values) {
  try {
    po::store(po::command_line_parser(argc - 1, argv + 1).options(flags).run(), values);
    po::notify(values);
  } catch (const po::error& error) {
    throw Error(ExitCode::kUsage, cat(pstrain::describe(error), " (see pstrain-data ", argv[1], " --help)"));
  }
  if (values.count("help")) {
    std::cout << usage << '\n' << flags;
    return false;
  }
  return true;
}

std::uint64_t ctr_count_flag(const po::variables_map& values, const char* flag, std::uint64_t fallback) {
  if (!values.count(flag)) return fallback;
  const std::string text = values[flag].as<std::string>();
  const bool digits = !text.empty() && text[0] >= '0' && text[0] <= '9';  // no spaces, no sign
  const std::optional<std::uint64_t> value = digits ? pstrain::parse_number<std::uint64_t>(text) : std::nullopt;
  if (!value || *value == 0) {
    throw Error(ExitCode::kUsage, cat("--", flag, " must be a whole number > 0, got '", text, "'"));
  }
  return *value;
}

double ctr_fraction_flag(const po::variables_map& values, const char* flag, double fallback) {
  if (!values.count(flag)) return fallback;
  const std::string text = values[flag].as<std::string>();
  const std::optional<double> value = pstrain::parse_number<double>(text);
  if (!value || !(*value >= 0 && *value < 1)) {
    throw Error(ExitCode::kUsage, cat("--", flag, " must be a fraction, 0 <= F < 1, got '", text, "'"));
  }
  return *value;
}

void publish_ctr_folder(StagingFolder& staging, std::vector<std::string> shard_names, const std::string& fields_tsv,
                        const std::string& report) {
  namespace data = pstrain::data;
  pstrain::write_file_atomically(staging.path() / data::kCtrFieldsFileName, fields_tsv);
  pstrain::write_file_atomically(staging.path() / data::kCtrReportFileName, report);
  std::vector<std::string> names{data::kCtrFieldsFileName, data::kCtrReportFileName};
  names.insert(names.end(), shard_names.begin(), shard_names.end());
  data::write_data_manifest(staging.path());
  names.emplace_back(pstrain::kManifestName);  // last: the folder is whole once it exists
  staging.publish(names);
}

}  // namespace pstrain_data
