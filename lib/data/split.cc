#include "data/split.h"

#include "core/error.h"

namespace pstrain::data {

namespace {

// Samples [begin, end) of `samples`, with meta.source recording which slice this is.
Samples slice(const Samples& samples, std::size_t begin, std::size_t end) {
  const std::size_t size = samples.meta.sample_size();
  Samples part;
  part.meta = samples.meta;
  part.meta.sample_count = end - begin;
  part.features.assign(samples.features.begin() + static_cast<std::ptrdiff_t>(begin * size),
                       samples.features.begin() + static_cast<std::ptrdiff_t>(end * size));
  part.labels.assign(samples.labels.begin() + static_cast<std::ptrdiff_t>(begin),
                     samples.labels.begin() + static_cast<std::ptrdiff_t>(end));
  return part;
}

void check_consistent(const Samples& samples) {
  PSTRAIN_ASSERT(samples.labels.size() == samples.meta.sample_count, samples.labels.size(), " labels for sample_count ",
                 samples.meta.sample_count);
  PSTRAIN_ASSERT(samples.features.size() == samples.meta.sample_count * samples.meta.sample_size(),
                 samples.features.size(), " feature values for ", samples.meta.sample_count, " samples");
}

}  // namespace

std::vector<Samples> split_samples(const Samples& samples, std::size_t parts) {
  check_consistent(samples);
  const std::size_t count = samples.labels.size();
  if (parts == 0) throw Error(ExitCode::kUsage, "cannot split samples into 0 parts");
  if (parts > count) {
    throw Error(ExitCode::kUsage,
                cat("cannot split ", count, " samples into ", parts, " parts: every part needs at least one sample"));
  }
  std::vector<Samples> result;
  result.reserve(parts);
  std::size_t begin = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t end = begin + count / parts + (i < count % parts ? 1 : 0);
    result.push_back(slice(samples, begin, end));
    result.back().meta.source = cat(samples.meta.source, " (samples ", begin, " to ", end - 1, ")");
    begin = end;
  }
  return result;
}

Samples take_first(const Samples& samples, std::size_t n) {
  check_consistent(samples);
  const std::size_t count = samples.labels.size();
  if (n == 0) throw Error(ExitCode::kUsage, "cannot take the first 0 samples: a subset needs at least one");
  if (n > count) throw Error(ExitCode::kUsage, cat("cannot take the first ", n, " samples of only ", count));
  Samples subset = slice(samples, 0, n);
  if (n < count) subset.meta.source = cat(samples.meta.source, " (first ", n, " of ", count, " samples)");
  return subset;
}

}  // namespace pstrain::data
