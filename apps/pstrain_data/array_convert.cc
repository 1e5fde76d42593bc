#include "array_convert.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "array_input.h"
#include "core/error.h"
#include "core/log.h"
#include "data/split.h"
#include "output_folder.h"

namespace pstrain_data {

using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;
namespace data = pstrain::data;

namespace {

// The same permutation for the same seed on every machine: Fisher-Yates on mt19937_64's own output (std::shuffle's
// use of the generator is left to the standard library).
data::Samples shuffled(const data::Samples& samples, std::uint64_t seed) {
  const std::size_t count = samples.labels.size(), size = samples.meta.sample_size();
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = i;
  std::mt19937_64 generator(seed);
  for (std::size_t i = count; i > 1; --i) std::swap(order[i - 1], order[generator() % i]);
  data::Samples result;
  result.meta = samples.meta;
  result.meta.source = cat(samples.meta.source, ", shuffled (seed ", seed, ")");
  result.features.resize(samples.features.size());
  result.labels.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::copy_n(samples.features.begin() + static_cast<std::ptrdiff_t>(order[i] * size), size,
                result.features.begin() + static_cast<std::ptrdiff_t>(i * size));
    result.labels[i] = samples.labels[order[i]];
  }
  return result;
}

// Moves the last round(fraction * count) samples (at least one) of `samples` into the result; `which` and `flag`
// name them in messages. At least one sample must stay.
data::Samples carve_tail(data::Samples& samples, double fraction, const char* which, const char* flag) {
  const std::size_t count = samples.labels.size();
  const auto tail = std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(fraction * count)));
  if (tail >= count) {
    throw Error(ExitCode::kUsage,
                cat("--", flag, " ", fraction, " of ", count, " training samples leaves none to train on"));
  }
  data::Samples head = data::take_first(samples, count - tail);
  data::Samples rest;
  rest.meta = samples.meta;
  rest.meta.sample_count = tail;
  rest.meta.source = cat(samples.meta.source, " (", which, ": its last ", tail, " samples)");
  const std::size_t size = samples.meta.sample_size();
  rest.features.assign(samples.features.end() - static_cast<std::ptrdiff_t>(tail * size), samples.features.end());
  rest.labels.assign(samples.labels.end() - static_cast<std::ptrdiff_t>(tail), samples.labels.end());
  head.meta.source = cat(samples.meta.source, " (train: its first ", count - tail, " samples)");
  samples = std::move(head);
  return rest;
}

std::uint32_t class_count(const Options& options, const std::vector<const data::Samples*>& splits) {
  std::int32_t largest = 0;
  const data::Samples* holder = splits.front();
  for (const data::Samples* split : splits) {
    for (const std::int32_t label : split->labels) {
      if (label > largest) {
        largest = label;
        holder = split;
      }
    }
  }
  const auto needed = static_cast<std::uint32_t>(largest) + 1;
  if (!options.num_classes) return needed;
  if (*options.num_classes < needed) {
    throw Error(ExitCode::kUsage, cat("--num-classes ", *options.num_classes, " but ", holder->meta.source,
                                      " holds the label ", largest, " (classes are 0 to num-classes - 1)"));
  }
  return *options.num_classes;
}

data::Samples limited(data::Samples samples, const std::optional<std::size_t>& limit, const char* flag) {
  if (!limit) return samples;
  if (*limit > samples.labels.size()) {
    throw Error(ExitCode::kUsage, cat("--", flag, " ", *limit, " exceeds the ", samples.labels.size(), " samples of ",
                                      samples.meta.source));
  }
  return data::take_first(samples, *limit);
}

}  // namespace

void convert_arrays(const Options& options) {
  ArraySplits splits = read_array_input(options);
  data::Samples train = limited(std::move(splits.train), options.limit, "limit");
  if (!options.keep_order) train = shuffled(train, options.seed);
  if (!splits.test && !options.test_fraction) {
    throw Error(ExitCode::kUsage,
                "no test samples: give a test file (npz: --test-input, npy: --test-features and "
                "--test-labels, csv: --test) or --test-fraction F to hold out part of the training samples");
  }
  data::Samples test =
      splits.test ? std::move(*splits.test) : carve_tail(train, *options.test_fraction, "test", "test-fraction");
  test = limited(std::move(test), options.test_limit, "test-limit");
  std::optional<data::Samples> valid = std::move(splits.valid);
  if (!valid && options.valid_fraction) valid = carve_tail(train, *options.valid_fraction, "valid", "valid-fraction");
  if (options.split_count > train.labels.size()) {
    throw Error(ExitCode::kUsage, cat("--split-count ", options.split_count, " exceeds the ", train.labels.size(),
                                      " training samples: every shard needs at least one"));
  }
  std::vector<const data::Samples*> all{&train, &test};
  if (valid) all.push_back(&*valid);
  const std::uint32_t classes = class_count(options, all);
  for (data::Samples* split : {&train, &test}) split->meta.num_classes = classes;
  if (valid) valid->meta.num_classes = classes;

  const std::vector<data::Samples> shards = data::split_samples(train, options.split_count);
  write_shard_folder(options.output, shards, valid, test);
  pstrain::log_info("wrote ", shards.size(), " train shards (", train.labels.size(), " samples in all), ",
                    valid ? cat(data::kValidShardFileName, " (", valid->labels.size(), " samples), ") : std::string(),
                    data::kTestShardFileName, " (", test.labels.size(), " samples); ", train.meta.sample_size(),
                    " features, ", classes, " classes; in ", options.output.string());
}

}  // namespace pstrain_data
