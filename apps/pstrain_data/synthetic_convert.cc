// pstrain-data synthetic-ctr: Criteo-format lines with a planted truth (data/ctr/synthetic_ctr.h), converted
// straight into a data folder through the criteo pipeline (the same parser: what a conversion of the text would
// give), and/or written as text (.txt or .gz) for pstrain-data criteo. Prints and records the Bayes-optimal test
// AUC and log-loss of the generator's own model.
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "core/log.h"
#include "core/parse_number.h"
#include "ctr_command.h"
#include "ctr_pipeline.h"
#include "data/ctr/criteo.h"
#include "data/ctr/synthetic_ctr.h"
#include "output_folder.h"

namespace pstrain_data {

namespace po = boost::program_options;
namespace fs = std::filesystem;
namespace ctr = pstrain::data::ctr;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;

namespace {

constexpr std::uint64_t kLinesPerJob = 16384;

constexpr const char* kUsage =
    "usage: pstrain-data synthetic-ctr --lines N [--seed S] [--output DIR] [--text-output FILE.txt|FILE.gz]\n"
    "                                  [--test-fraction F] [--valid-fraction F] [--split-count N | --shard-samples N]\n"
    "                                  [--zipf-exponent S] [--new-ids-every N [--new-id-share Q]] [--threads N]\n"
    "\n"
    "Generates N click-log lines in the Criteo format with a known logistic model (Criteo Kaggle's cardinalities,\n"
    "Zipf ids, multi-hot C6, C14, C24, pairwise interactions, numeric effects; data/ctr/synthetic_ctr.h), the same\n"
    "bits for the same seed. --output: a data folder, as pstrain-data criteo would convert the text (the last F,\n"
    "default 0.1, of the lines as test); --text-output: the text itself. Prints the Bayes-optimal test AUC and\n"
    "log-loss (the model's own click probabilities on the test lines), recorded in ctr_conversion.txt.\n"
    "\n"
    "--zipf-exponent S: each id's rank r is drawn with probability ~ r^-S (default 1.1); smaller is flatter.\n"
    "Expected distinct ids over the 26 fields in 10M lines: about 5.6M at 1.1, 21.7M at 0.5 (for >= 20M distinct\n"
    "ids in 10M lines use 0.5; 0.6 gives 20.3M).\n"
    "--new-ids-every N: a growing id space. A share Q (--new-id-share, default 0.5) of each field's ranks, the\n"
    "same on every run, is transient: its id (and so its weight) changes every N lines, each rank at its own\n"
    "phase, so about 1/N of them change at any line. For L training lines and new ids in each twentieth of them,\n"
    "N = L/20; a pass re-reads the same lines, so ids grow along the lines, not along passes. The test lines come\n"
    "last (the split is by order): they carry the newest ids.\n";

po::options_description synthetic_flags() {
  po::options_description flags("synthetic-ctr options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("lines", po::value<std::string>()->value_name("N"), "lines to generate")
      ("seed", po::value<std::string>()->value_name("S"), "the generator's seed (default 1)")
      ("output", po::value<std::string>()->value_name("DIR"), "write a data folder")
      ("text-output", po::value<std::string>()->value_name("FILE"), "write the lines as text (.gz: gzip'd)")
      ("test-fraction", po::value<std::string>()->value_name("F"), "the last F of the lines as test (default 0.1)")
      ("valid-fraction", po::value<std::string>()->value_name("F"), "the F of the lines before them as valid (default 0)")
      ("split-count", po::value<std::string>()->value_name("N"), "N train shards of equal size")
      ("shard-samples", po::value<std::string>()->value_name("N"), "train shards of N samples (default 1000000)")
      ("zipf-exponent", po::value<std::string>()->value_name("S"), "ids' Zipf exponent, 0 < S <= 10 (default 1.1)")
      ("new-ids-every", po::value<std::string>()->value_name("N"), "new ids every N lines (default 0: never)")
      ("new-id-share", po::value<std::string>()->value_name("Q"), "transient share, 0 < Q <= 1 (default 0.5)")
      ("threads", po::value<std::string>()->value_name("N"), "threads (default: the cores, at most 16)");
  // clang-format on
  return flags;
}

class GeneratorStream : public TextStream {
 public:
  GeneratorStream(const ctr::SyntheticCtr& generator, std::uint64_t lines) : generator_(generator), lines_(lines) {}
  std::optional<TextJob> next() override {
    if (next_ >= lines_) return std::nullopt;
    const std::uint64_t first = next_, count = std::min(kLinesPerJob, lines_ - next_);
    next_ += count;
    return TextJob{first, [this, first, count] { return generator_.text(first, count); }};
  }
  std::string name() const override { return "synthetic-ctr"; }

 private:
  const ctr::SyntheticCtr& generator_;
  std::uint64_t lines_, next_ = 0;
};

// The text output, written under a temporary name and renamed at the end: never a half-written file.
class TextOutput {
 public:
  explicit TextOutput(fs::path path) : path_(std::move(path)), temp_(cat(path_.string(), ".tmp-", ::getpid())) {
    gz_ = path_.extension() == ".gz";
    file_ =
        gz_ ? static_cast<void*>(gzopen(temp_.c_str(), "wb1")) : static_cast<void*>(std::fopen(temp_.c_str(), "wb"));
    if (file_ == nullptr) throw Error(ExitCode::kOutput, cat("cannot write ", path_.string()));
  }
  ~TextOutput() {
    close();
    std::error_code ignored;
    if (!done_) fs::remove(temp_, ignored);
  }
  void write(const std::string& text) {
    const bool ok = gz_ ? gzwrite(static_cast<gzFile>(file_), text.data(), static_cast<unsigned>(text.size())) ==
                              static_cast<int>(text.size())
                        : std::fwrite(text.data(), 1, text.size(), static_cast<std::FILE*>(file_)) == text.size();
    if (!ok) throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), " (disk full?)"));
  }
  void finish() {
    if (!close()) throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), " (disk full?)"));
    std::error_code ec;
    fs::rename(temp_, path_, ec);
    if (ec) throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), ": ", ec.message()));
    done_ = true;
  }

 private:
  bool close() {
    if (file_ == nullptr) return true;
    const bool ok =
        gz_ ? gzclose(static_cast<gzFile>(file_)) == Z_OK : std::fclose(static_cast<std::FILE*>(file_)) == 0;
    file_ = nullptr;
    return ok;
  }
  fs::path path_, temp_;
  void* file_ = nullptr;
  bool gz_ = false, done_ = false;
};

// A real-valued flag in (0, high]: exit 2 naming the flag and its range otherwise.
double positive_flag(const po::variables_map& values, const char* flag, double fallback, double high) {
  if (!values.count(flag)) return fallback;
  const std::string text = values[flag].as<std::string>();
  const std::optional<double> value = pstrain::parse_number<double>(text);
  if (!value || !(*value > 0 && *value <= high)) {
    throw Error(ExitCode::kUsage, cat("--", flag, " must be a number, 0 < value <= ", high, ", got '", text, "'"));
  }
  return *value;
}

// The generator's parameters from --zipf-exponent, --new-ids-every and --new-id-share.
ctr::SyntheticCtrOptions generator_options(const po::variables_map& values) {
  ctr::SyntheticCtrOptions options;
  options.zipf_exponent = positive_flag(values, "zipf-exponent", options.zipf_exponent, 10);
  if (values.count("new-ids-every")) {
    const std::string text = values["new-ids-every"].as<std::string>();
    const bool digits = !text.empty() && text[0] >= '0' && text[0] <= '9';  // no spaces, no sign
    const std::optional<std::uint64_t> every = digits ? pstrain::parse_number<std::uint64_t>(text) : std::nullopt;
    if (!every) throw Error(ExitCode::kUsage, cat("--new-ids-every must be a whole number of lines, got '", text, "'"));
    options.new_ids_every = *every;
  }
  if (values.count("new-id-share") && options.new_ids_every == 0) {
    throw Error(ExitCode::kUsage, "--new-id-share needs --new-ids-every N (N > 0): without it no id changes");
  }
  options.new_id_share = positive_flag(values, "new-id-share", options.new_id_share, 1);
  return options;
}

// The generator's parameters as the data folder's report states them.
std::string model_text(const ctr::SyntheticCtrOptions& options) {
  std::ostringstream out;
  out << "model: data/ctr/synthetic_ctr.h (Criteo Kaggle's cardinalities, Zipf " << options.zipf_exponent
      << " ids, multi-hot C6 C14 C24)\nnew ids: ";
  if (options.new_ids_every == 0) {
    out << "none (every rank keeps its id)\n";
  } else {
    out << "every " << options.new_ids_every << " lines for a share " << options.new_id_share
        << " of each field's ranks (new-ids-every " << options.new_ids_every << ", new-id-share "
        << options.new_id_share << ")\n";
  }
  return out.str();
}

std::string metrics_text(const ctr::BayesMetrics& bayes, std::uint64_t first_test, std::uint64_t lines) {
  std::ostringstream out;
  out << std::setprecision(6) << "bayes test lines: " << first_test + 1 << "-" << lines << " (" << bayes.lines
      << ")\nbayes test AUC: " << bayes.auc << "\nbayes test logloss: " << bayes.logloss
      << "\ntest click rate: " << bayes.click_rate << '\n';
  return out.str();
}

// The lines' split by order: the last --test-fraction as test, the --valid-fraction before them as validation.
LineOrderSplit split_by_fractions(const po::variables_map& values, std::uint64_t lines) {
  const double test = ctr_fraction_flag(values, "test-fraction", 0.1);
  const double valid = ctr_fraction_flag(values, "valid-fraction", 0);
  LineOrderSplit split;
  split.test_begin = lines - static_cast<std::uint64_t>(std::llround(test * static_cast<double>(lines)));
  split.valid_begin =
      split.test_begin - std::min(split.test_begin, static_cast<std::uint64_t>(std::llround(valid * lines)));
  if (split.valid_begin == 0 || split.test_begin == lines) {
    throw Error(ExitCode::kUsage, cat("--lines ", lines, " with these fractions leaves no train or no test lines"));
  }
  return split;
}

// Samples per train shard: --shard-samples, or the train lines over --split-count shards.
std::uint64_t train_shard_samples(const po::variables_map& values, const LineOrderSplit& split) {
  if (values.count("split-count") && values.count("shard-samples")) {
    throw Error(ExitCode::kUsage, "--split-count and --shard-samples both size the train shards; give one");
  }
  if (!values.count("split-count")) return ctr_count_flag(values, "shard-samples", 1'000'000);
  const std::uint64_t count = ctr_count_flag(values, "split-count", 1);
  return (split.valid_begin + count - 1) / count;
}

}  // namespace

void generate_synthetic_ctr(int argc, char** argv) {
  po::variables_map values;
  const po::options_description flags = synthetic_flags();
  if (!parse_ctr_flags(argc, argv, flags, kUsage, values)) return;
  if (!values.count("lines")) throw Error(ExitCode::kUsage, "missing --lines (see pstrain-data synthetic-ctr --help)");
  if (!values.count("output") && !values.count("text-output")) {
    throw Error(ExitCode::kUsage, "give --output DIR (a data folder), --text-output FILE (the lines), or both");
  }
  const std::uint64_t lines = ctr_count_flag(values, "lines", 1), seed = ctr_count_flag(values, "seed", 1);
  const LineOrderSplit split = split_by_fractions(values, lines);
  const std::uint64_t shard_samples = train_shard_samples(values, split);
  const ctr::SyntheticCtrOptions generator_settings = generator_options(values);
  const ctr::SyntheticCtr generator(seed, generator_settings);
  std::optional<fs::path> output;
  if (values.count("output")) {
    output = values["output"].as<std::string>();
    refuse_converted_folder(*output);
  }
  std::optional<TextOutput> text;
  if (values.count("text-output")) text.emplace(values["text-output"].as<std::string>());

  std::vector<StreamPlan> streams;
  streams.push_back({std::make_unique<GeneratorStream>(generator, lines), true, std::nullopt, 0});
  PipelineOptions options;
  options.threads = ctr_threads(values.count("threads") ? ctr_count_flag(values, "threads", 1) : 0);
  options.parse = output.has_value();
  if (text) options.on_text = [&](const std::string& block) { text->write(block); };
  std::optional<StagingFolder> staging;
  std::optional<ctr::CtrFolderWriter> writer;
  const std::string source = cat("synthetic-ctr: seed ", seed, ", ", lines, " lines");
  if (output) {
    staging.emplace(*output);
    writer.emplace(staging->path(), ctr::criteo_layout("synthetic-ctr"), shard_samples, source);
  }
  const PipelineResult result = run_ctr_pipeline(streams, split, writer ? &*writer : nullptr, options);
  const ctr::BayesMetrics bayes = ctr::bayes_metrics(generator, split.test_begin, lines);
  const std::string metrics = metrics_text(bayes, split.test_begin, lines);
  if (text) text->finish();
  if (output) {
    const std::vector<std::string> shards = writer->finish();
    std::ostringstream report;
    report << "dataset: synthetic-ctr\nseed: " << seed << "\nlines: " << lines << '\n'
           << model_text(generator_settings) << "split: train lines 1-" << split.valid_begin << ", valid "
           << split.test_begin - split.valid_begin << " lines, test " << split.test_begin + 1 << "-" << lines
           << "\nsamples: train " << writer->samples(ctr::Split::kTrain) << " in shards of at most " << shard_samples
           << '\n'
           << metrics << std::fixed << std::setprecision(1) << "seconds: " << result.seconds
           << " (generate, parse, write; threads " << options.threads << ")\n";
    publish_ctr_folder(*staging, shards, ctr::field_stats_text(ctr::criteo_layout("synthetic-ctr"), result.fields),
                       report.str());
  }
  std::cout << metrics;
  pstrain::log_info("generated ", lines, " lines (seed ", seed, ")", output ? cat(" into ", output->string()) : "",
                    text ? cat(text ? " and " : "", values["text-output"].as<std::string>()) : "");
}

}  // namespace pstrain_data
