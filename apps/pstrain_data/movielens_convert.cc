// pstrain-data movielens: GroupLens's ratings.csv and movies.csv into CTR shards (data/ctr/movielens.h). Small
// enough to read whole (ml-latest-small: 100,004 ratings; ml-25m: 25 million, about 2 GB in memory).
#include <sstream>

#include "core/error.h"
#include "core/log.h"
#include "ctr_command.h"
#include "data/ctr/ctr_folder_writer.h"
#include "data/ctr/movielens.h"
#include "output_folder.h"

namespace pstrain_data {

namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace ctr = pstrain::data::ctr;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;

namespace {

constexpr double kDefaultTestFraction = 0.1;

constexpr const char* kUsage =
    "usage: pstrain-data movielens --input DIR --output DIR [--split-count N] [--test-fraction F]\n"
    "\n"
    "Converts GroupLens's MovieLens ratings (DIR holds ratings.csv and movies.csv) into CTR shards, one sample per\n"
    "rating: fields user, movie, genres (multi-hot), year (from the title); dense movie_year = (year - 1900) / 100\n"
    "and year_missing; label rating >= 4. Split: each user's last F (default 0.1) of their ratings by time are\n"
    "test.h5 (no user's future in training), the rest train.\n";

po::options_description movielens_flags() {
  po::options_description flags("movielens options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("input", po::value<std::string>()->value_name("DIR"), "folder holding ratings.csv and movies.csv")
      ("output", po::value<std::string>()->value_name("DIR"), "the data folder (created; must not hold a conversion)")
      ("split-count", po::value<std::string>()->value_name("N"), "train shards (default 1)")
      ("test-fraction", po::value<std::string>()->value_name("F"), "each user's last F of ratings as test (default 0.1)");
  // clang-format on
  return flags;
}

std::string report_text(const fs::path& input, const ctr::MovieLensSplits& splits, double fraction,
                        std::uint64_t shards) {
  std::ostringstream out;
  out << "dataset: movielens\ninput: " << input.string() << " (ratings.csv: " << splits.ratings << " ratings of "
      << splits.users << " users; movies.csv: " << splits.movies << " movies)\n"
      << "fields: user (userId), movie (movieId), genres (multi-hot: 1-based place in GroupLens's list of 19), year"
      << " (from the title; empty bag without one)\n"
      << "dense features: movie_year = (year - 1900) / 100 (0 without a year), year_missing\n"
      << "label: rating >= 4\n"
      << "split: each user's last round(" << fraction << " x their ratings) by timestamp (ties: file order) are test\n"
      << "samples: train " << splits.train.samples << " in " << shards << " shards, test " << splits.test.samples
      << '\n';
  return out.str();
}

}  // namespace

void convert_movielens(int argc, char** argv) {
  po::variables_map values;
  const po::options_description flags = movielens_flags();
  if (!parse_ctr_flags(argc, argv, flags, kUsage, values)) return;
  for (const char* flag : {"input", "output"}) {
    if (!values.count(flag)) {
      throw Error(ExitCode::kUsage, cat("missing --", flag, " (see pstrain-data movielens --help)"));
    }
  }
  const fs::path input = values["input"].as<std::string>(), output = values["output"].as<std::string>();
  refuse_converted_folder(output);
  const double fraction = ctr_fraction_flag(values, "test-fraction", kDefaultTestFraction);
  if (fraction == 0)
    throw Error(ExitCode::kUsage, "--test-fraction must be > 0: the test set is a part of each user's");
  if (std::error_code ec; !fs::is_directory(input, ec)) {
    throw Error(ExitCode::kInputData, cat("input folder ", input.string(), " does not exist"));
  }
  const ctr::MovieLensSplits splits = ctr::read_movielens(input, fraction);
  const std::uint64_t count = ctr_count_flag(values, "split-count", 1);
  if (count > splits.train.samples) {
    throw Error(ExitCode::kUsage, cat("--split-count ", count, " exceeds the ", splits.train.samples,
                                      " training samples: every shard needs at least one"));
  }
  if (splits.test.samples == 0) {
    throw Error(ExitCode::kInputData, cat(input.string(), ": no user has enough ratings for a test part"));
  }
  StagingFolder staging(output);
  const ctr::CtrLayout layout = ctr::movielens_layout();
  ctr::CtrFolderWriter writer(staging.path(), layout, (splits.train.samples + count - 1) / count,
                              cat("movielens: ", input.string()));
  writer.append(ctr::Split::kTrain, splits.train, 0, splits.train.samples);
  writer.append(ctr::Split::kTest, splits.test, 0, splits.test.samples);
  const std::vector<std::string> shards = writer.finish();
  std::vector<ctr::FieldStats> stats(layout.field_names.size());
  for (std::size_t f = 0; f < stats.size(); ++f) {
    stats[f].add(splits.train, f, false);
    stats[f].add(splits.test, f, false);
  }
  publish_ctr_folder(staging, shards, ctr::field_stats_text(layout, stats, splits.distinct),
                     report_text(input, splits, fraction, shards.size() - 1));
  pstrain::log_info("wrote ", shards.size() - 1, " train shards (", splits.train.samples, " ratings) and ",
                    splits.test.samples, " test ratings of ", splits.users, " users into ", output.string());
}

}  // namespace pstrain_data
