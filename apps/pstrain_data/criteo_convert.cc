// pstrain-data criteo: Criteo Display Advertising files (.txt or .gz) into CTR shards, streamed (ctr_pipeline.h).
// Without --test-input, the main inputs are split by line order (Criteo's days are in order): the last
// --test-fraction of their lines is test.h5, the --valid-fraction before it valid.h5. That needs their line
// count first: one extra pass over the input (a .gz is decompressed twice).
#include <cmath>
#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "core/log.h"
#include "ctr_command.h"
#include "ctr_pipeline.h"
#include "data/ctr/criteo.h"
#include "data/ctr/line_blocks.h"
#include "output_folder.h"

namespace pstrain_data {

namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace ctr = pstrain::data::ctr;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;

namespace {

constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
constexpr std::uint64_t kDefaultShardSamples = 1'000'000;  // about 470 MB of shard for Criteo's 13 + 26 columns
constexpr double kDefaultTestFraction = 0.1;

constexpr const char* kUsage =
    "usage: pstrain-data criteo --input FILE... --output DIR [--test-input FILE] [--valid-input FILE]\n"
    "                           [--test-fraction F] [--valid-fraction F] [--split-count N | --shard-samples N]\n"
    "                           [--threads N] [--skip-bad-lines]\n"
    "\n"
    "Converts Criteo Display Advertising files (.txt or .gz: label, I1-I13, C1-C26, tab-separated) into CTR\n"
    "shards: dense features log(1 + max(x, 0)) (empty: 0), categorical fields as bags of the raw 64-bit ids their\n"
    "hex spells (empty: an empty bag), labels 0/1. A --test-input of 39 columns (no label: Criteo's own test file)\n"
    "becomes an unlabeled test.h5. Without --test-input, the last --test-fraction (default 0.1) of the --input\n"
    "lines, in order, is test.h5 (Criteo's days are in order), the --valid-fraction before it valid.h5.\n"
    "Writes ctr_fields.tsv (distinct ids per field: HyperLogLog, 0.81% standard error) and ctr_conversion.txt.\n";

po::options_description criteo_flags() {
  po::options_description flags("criteo options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("input", po::value<std::vector<std::string>>()->multitoken()->value_name("FILE..."), "Criteo files, in order (.txt or .gz)")
      ("test-input", po::value<std::string>()->value_name("FILE"), "test samples (39 columns: unlabeled)")
      ("valid-input", po::value<std::string>()->value_name("FILE"), "validation samples")
      ("output", po::value<std::string>()->value_name("DIR"), "the data folder (created; must not hold a conversion)")
      ("test-fraction", po::value<std::string>()->value_name("F"), "without --test-input: the last F of the lines as test (default 0.1)")
      ("valid-fraction", po::value<std::string>()->value_name("F"), "without --valid-input: the F of the lines before the test lines as valid (default 0)")
      ("split-count", po::value<std::string>()->value_name("N"), "N train shards of equal size")
      ("shard-samples", po::value<std::string>()->value_name("N"), "train shards of N samples (default 1000000)")
      ("threads", po::value<std::string>()->value_name("N"), "parsing threads (default: the cores, at most 16)")
      ("skip-bad-lines", "leave malformed lines out, count them in the report (default: stop at the first)");
  // clang-format on
  return flags;
}

struct CriteoPlan {
  std::vector<fs::path> inputs;
  std::vector<std::uint64_t> input_lines;
  LineOrderSplit split;
  std::uint64_t main_lines = 0, shard_samples = kDefaultShardSamples;
  std::string split_text;
};

// Whether a file has labels, from its first line; an empty file is an error.
bool probe_labeled(const fs::path& path) {
  ctr::LineBlocks blocks(path, 1 << 16);
  std::string block;
  if (!blocks.next(block)) throw Error(ExitCode::kInputData, cat(path.string(), ": empty file (no lines)"));
  return ctr::criteo_line_labeled(std::string_view(block).substr(0, block.find('\n')), path.string());
}

CriteoPlan plan_split(const po::variables_map& values, CriteoPlan plan) {
  for (const fs::path& input : plan.inputs) {
    if (!probe_labeled(input)) {
      throw Error(ExitCode::kInputData, cat(input.string(),
                                            ": 39 columns, no labels: a file to train on needs them "
                                            "(give a file without labels as --test-input)"));
    }
    plan.input_lines.push_back(ctr::count_lines(input));
    plan.main_lines += plan.input_lines.back();
  }
  const bool test_file = values.count("test-input") > 0, valid_file = values.count("valid-input") > 0;
  if (test_file && values.count("test-fraction")) {
    throw Error(ExitCode::kUsage, "--test-fraction and --test-input both name the test samples; give one");
  }
  if (valid_file && values.count("valid-fraction")) {
    throw Error(ExitCode::kUsage, "--valid-fraction and --valid-input both name the validation samples; give one");
  }
  const double test = test_file ? 0 : ctr_fraction_flag(values, "test-fraction", kDefaultTestFraction);
  const double valid = valid_file ? 0 : ctr_fraction_flag(values, "valid-fraction", 0);
  if (!test_file && test == 0)
    throw Error(ExitCode::kUsage, "no test samples: give --test-input or --test-fraction > 0");
  const auto lines = [&](double fraction) {
    return static_cast<std::uint64_t>(std::llround(fraction * static_cast<double>(plan.main_lines)));
  };
  plan.split.test_begin = plan.main_lines - lines(test);
  plan.split.valid_begin = plan.split.test_begin - std::min(lines(valid), plan.split.test_begin);
  if (plan.split.valid_begin == 0) {
    throw Error(ExitCode::kUsage, cat("the fractions leave none of the ", plan.main_lines, " input lines to train on"));
  }
  plan.split_text =
      cat("by line order of the inputs (", plan.main_lines, " lines): train lines 1-", plan.split.valid_begin,
          plan.split.valid_begin < plan.split.test_begin
              ? cat(", valid ", plan.split.valid_begin + 1, "-", plan.split.test_begin)
              : std::string(),
          test_file ? std::string() : cat(", test ", plan.split.test_begin + 1, "-", plan.main_lines),
          test_file ? cat("; test: ", values["test-input"].as<std::string>()) : std::string(),
          valid_file ? cat("; valid: ", values["valid-input"].as<std::string>()) : std::string());
  if (values.count("split-count") && values.count("shard-samples")) {
    throw Error(ExitCode::kUsage, "--split-count and --shard-samples both size the train shards; give one");
  }
  if (values.count("split-count")) {
    const std::uint64_t count = ctr_count_flag(values, "split-count", 1);
    if (count > plan.split.valid_begin) {
      throw Error(ExitCode::kUsage, cat("--split-count ", count, " exceeds the ", plan.split.valid_begin,
                                        " training lines: every shard needs at least one"));
    }
    plan.shard_samples = (plan.split.valid_begin + count - 1) / count;
  }
  plan.shard_samples = ctr_count_flag(values, "shard-samples", plan.shard_samples);
  return plan;
}

std::vector<StreamPlan> streams_of(const po::variables_map& values, const CriteoPlan& plan) {
  std::vector<StreamPlan> streams;
  std::uint64_t base = 0;
  for (std::size_t i = 0; i < plan.inputs.size(); ++i) {
    streams.push_back({file_stream(plan.inputs[i], kBlockBytes), true, std::nullopt, base});
    base += plan.input_lines[i];
  }
  for (const auto& [flag, split] : {std::pair{"valid-input", ctr::Split::kValid}, {"test-input", ctr::Split::kTest}}) {
    if (!values.count(flag)) continue;
    const fs::path path = values[flag].as<std::string>();
    const bool labeled = probe_labeled(path);
    if (!labeled && split == ctr::Split::kValid) {
      throw Error(ExitCode::kInputData, cat(path.string(), ": 39 columns, no labels: validation needs them"));
    }
    streams.push_back({file_stream(path, kBlockBytes), labeled, split, 0});
  }
  return streams;
}

std::string report_text(const CriteoPlan& plan, const PipelineResult& result, const ctr::CtrFolderWriter& writer,
                        std::size_t train_shards, std::size_t threads) {
  std::ostringstream out;
  out << "dataset: criteo\n";
  for (std::size_t i = 0; i < plan.inputs.size(); ++i) {
    out << "input: " << plan.inputs[i].string() << " (" << plan.input_lines[i] << " lines)\n";
  }
  out << "dense features: I1-I13 as log(1 + max(x, 0)), empty as 0\n"
      << "categorical fields: C1-C26 as bags of raw 64-bit ids (the hex as written; empty column: empty bag)\n"
      << "split: " << plan.split_text << '\n'
      << "samples: train " << writer.samples(ctr::Split::kTrain) << " in " << train_shards << " shards of at most "
      << plan.shard_samples << ", valid " << writer.samples(ctr::Split::kValid) << ", test "
      << writer.samples(ctr::Split::kTest) << '\n'
      << "lines read: " << result.lines << "\nbad lines skipped: " << result.bad_lines << '\n';
  for (const std::string& bad : result.first_bad) out << "bad line: " << bad << '\n';
  out << std::fixed << std::setprecision(1) << "seconds: " << result.seconds << " (parse and write; threads " << threads
      << ")\nlines per second: " << std::setprecision(0)
      << static_cast<double>(result.lines) / std::max(result.seconds, 1e-9) << '\n';
  return out.str();
}

}  // namespace

void convert_criteo(int argc, char** argv) {
  po::variables_map values;
  const po::options_description flags = criteo_flags();
  if (!parse_ctr_flags(argc, argv, flags, kUsage, values)) return;
  for (const char* flag : {"input", "output"}) {
    if (!values.count(flag))
      throw Error(ExitCode::kUsage, cat("missing --", flag, " (see pstrain-data criteo --help)"));
  }
  const fs::path output = values["output"].as<std::string>();
  refuse_converted_folder(output);
  CriteoPlan plan;
  for (const std::string& input : values["input"].as<std::vector<std::string>>()) plan.inputs.emplace_back(input);
  plan = plan_split(values, std::move(plan));
  std::vector<StreamPlan> streams = streams_of(values, plan);
  PipelineOptions options;
  options.threads = ctr_threads(values.count("threads") ? ctr_count_flag(values, "threads", 1) : 0);
  options.skip_bad = values.count("skip-bad-lines") > 0;

  StagingFolder staging(output);
  std::string source;
  for (const fs::path& input : plan.inputs) source += cat(source.empty() ? "" : ", ", input.string());
  ctr::CtrFolderWriter writer(staging.path(), ctr::criteo_layout("criteo"), plan.shard_samples,
                              cat("criteo: ", source));
  const PipelineResult result = run_ctr_pipeline(streams, plan.split, &writer, options);
  const std::vector<std::string> shards = writer.finish();
  const std::size_t train_shards = shards.size() - 1 - (writer.samples(ctr::Split::kValid) > 0 ? 1 : 0);
  const std::string report = report_text(plan, result, writer, train_shards, options.threads);
  publish_ctr_folder(staging, shards, ctr::field_stats_text(ctr::criteo_layout("criteo"), result.fields), report);
  pstrain::log_info("wrote ", train_shards, " train shards (", writer.samples(ctr::Split::kTrain), " samples), ",
                    writer.samples(ctr::Split::kValid), " valid and ", writer.samples(ctr::Split::kTest),
                    " test samples into ", output.string(), "; ", result.lines, " lines in ", result.seconds, " s (",
                    static_cast<std::uint64_t>(static_cast<double>(result.lines) / std::max(result.seconds, 1e-9)),
                    " lines/s), ", result.bad_lines, " bad lines skipped");
}

}  // namespace pstrain_data
