#include "array_input.h"

#include "core/error.h"
#include "data/csv_table.h"
#include "data/npy.h"
#include "data/npz.h"

namespace pstrain_data {

namespace fs = std::filesystem;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;
namespace data = pstrain::data;

namespace {

// Features of a split and what NumPy type they were, so that two splits scaled differently (uint8 images divided
// by 255 beside floats kept as they are) are refused instead of trained on.
struct NamedArrays {
  data::NpyArray features, labels;
  std::string features_name, labels_name;
};

data::Samples samples_from_arrays(const NamedArrays& arrays, const std::string& dataset) {
  data::Samples samples;
  samples.features = data::npy_features(arrays.features, arrays.features_name);
  samples.labels = data::npy_labels(arrays.labels, arrays.labels_name);
  const std::uint64_t count = arrays.features.shape[0];
  if (samples.labels.size() != count) {
    throw Error(ExitCode::kInputData, cat(arrays.features_name, " holds ", count, " samples but ", arrays.labels_name,
                                          " holds ", samples.labels.size(), " labels"));
  }
  samples.meta.dataset = dataset;
  samples.meta.sample_shape.assign(arrays.features.shape.begin() + 1, arrays.features.shape.end());
  if (samples.meta.sample_shape.empty()) samples.meta.sample_shape = {1};  // one feature per sample
  if (samples.meta.sample_size() == 0) {
    throw Error(ExitCode::kInputData, cat(arrays.features_name, ": samples of 0 features"));
  }
  samples.meta.sample_count = count;
  samples.meta.source = cat(arrays.features_name, " (", arrays.features.descr, "), ", arrays.labels_name);
  return samples;
}

// Which arrays of an archive are the features and labels: the flags', else x and y, else the split's own names as
// Keras' datasets (mnist.npz) store them, x_train/y_train or x_test/y_test.
std::pair<std::string, std::string> npz_keys(const data::NpzArchive& archive, const Options& options,
                                             const char* split) {
  if (options.features_key || options.labels_key) {
    return {options.features_key.value_or("x"), options.labels_key.value_or("y")};
  }
  if (archive.contains("x") && archive.contains("y")) return {"x", "y"};
  const std::string x = cat("x_", split), y = cat("y_", split);
  if (archive.contains(x) && archive.contains(y)) return {x, y};
  std::string known;
  for (const std::string& key : archive.keys()) known += cat(known.empty() ? "" : ", ", key);
  throw Error(ExitCode::kUsage, cat("which arrays of the archive are the features and the labels? It holds ",
                                    known.empty() ? "none" : known, ", not x and y (or ", x, " and ", y,
                                    "): give --features-key and --labels-key"));
}

NamedArrays read_npz_split(const fs::path& path, const Options& options, const char* split) {
  const data::NpzArchive archive(path);
  const auto [features, labels] = npz_keys(archive, options, split);
  return {archive.read(features), archive.read(labels), cat(path.string(), ":", features),
          cat(path.string(), ":", labels)};
}

NamedArrays read_npy_split(const fs::path& features, const fs::path& labels) {
  return {data::read_npy(features), data::read_npy(labels), features.string(), labels.string()};
}

bool scaled_from_bytes(const NamedArrays& arrays) {
  return arrays.features.type == data::NpyType::kUint8;
}

void check_same_scaling(const NamedArrays& train, const NamedArrays& test) {
  if (scaled_from_bytes(train) != scaled_from_bytes(test)) {
    throw Error(ExitCode::kInputData, cat(train.features_name, " is '", train.features.descr, "' but ",
                                          test.features_name, " is '", test.features.descr,
                                          "': uint8 features are divided by 255 and floats are not, so the two would "
                                          "be scaled differently; store both with the same element type"));
  }
}

ArraySplits read_numpy(const Options& options) {
  const std::string dataset =
      options.dataset == "npz" ? options.input.stem().string() : options.features_file->stem().string();
  NamedArrays train = options.dataset == "npz" ? read_npz_split(options.input, options, "train")
                                               : read_npy_split(*options.features_file, *options.labels_file);
  std::optional<NamedArrays> test;
  if (options.dataset == "npz" && options.test_input) {
    test = read_npz_split(*options.test_input, options, "test");
  } else if (options.dataset == "npz" && !options.test_fraction && !options.features_key && !options.labels_key) {
    const data::NpzArchive archive(options.input);  // Keras' layout: the test arrays beside the training ones
    if (archive.contains("x_test") && archive.contains("y_test") && !archive.contains("x")) {
      test = read_npz_split(options.input, options, "test");
    }
  } else if (options.test_features_file) {
    test = read_npy_split(*options.test_features_file, *options.test_labels_file);
  }
  ArraySplits splits{samples_from_arrays(train, dataset), std::nullopt, std::nullopt};
  if (test) {
    check_same_scaling(train, *test);
    splits.test = samples_from_arrays(*test, dataset);
  }
  return splits;
}

data::Samples read_csv_split(const fs::path& path, const Options& options) {
  data::CsvSamples csv = data::read_csv_samples(path, options.label_column);
  data::Samples samples;
  samples.meta.dataset = options.train_file->stem().string();
  samples.meta.sample_shape = {csv.feature_count};
  samples.meta.sample_count = csv.labels.size();
  samples.meta.source = cat(path.string(), " (label: column ", csv.label_index,
                            csv.header.empty() ? std::string() : cat(" '", csv.header[csv.label_index], "'"), ")");
  samples.features = std::move(csv.features);
  samples.labels = std::move(csv.labels);
  return samples;
}

ArraySplits read_csv(const Options& options) {
  ArraySplits splits{read_csv_split(*options.train_file, options), std::nullopt, std::nullopt};
  if (options.valid_file) splits.valid = read_csv_split(*options.valid_file, options);
  if (options.test_file) splits.test = read_csv_split(*options.test_file, options);
  return splits;
}

}  // namespace

ArraySplits read_array_input(const Options& options) {
  ArraySplits splits = options.dataset == "csv" ? read_csv(options) : read_numpy(options);
  for (const std::optional<data::Samples>* other : {&splits.valid, &splits.test}) {
    if (*other && (*other)->meta.sample_shape != splits.train.meta.sample_shape) {
      throw Error(ExitCode::kInputData, cat((*other)->meta.source, ": samples of ", (*other)->meta.sample_size(),
                                            " features, but the training samples (", splits.train.meta.source,
                                            ") have ", splits.train.meta.sample_size()));
    }
  }
  return splits;
}

}  // namespace pstrain_data
