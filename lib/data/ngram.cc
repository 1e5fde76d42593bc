#include "data/ngram.h"

#include "core/error.h"

namespace pstrain::data {

std::string to_string(WindowMode mode) {
  return mode == WindowMode::kStream ? "stream" : "sentence";
}

namespace {

// Appends every window of `ids` (one stream) to `samples`.
void append_windows(const std::vector<std::int32_t>& ids, std::size_t ngram, Samples& samples) {
  for (std::size_t end = ngram; end <= ids.size(); ++end) {
    for (std::size_t k = end - ngram; k + 1 < end; ++k) samples.features.push_back(static_cast<float>(ids[k]));
    samples.labels.push_back(ids[end - 1]);
  }
}

}  // namespace

Samples make_windows(const Corpus& split, const Vocabulary& vocabulary, std::size_t ngram, WindowMode mode,
                     TokenMeta tokens) {
  PSTRAIN_ASSERT(ngram >= 2 && ngram <= kMaxNgram, "ngram ", ngram);
  PSTRAIN_ASSERT(vocabulary.size() <= kMaxVocabularySize, "vocabulary of ", vocabulary.size());
  Samples samples;
  std::vector<std::int32_t> ids;
  if (mode == WindowMode::kStream) {
    ids.reserve(split.words.size());
    for (const std::string& word : split.words) ids.push_back(vocabulary.id(word));
    append_windows(ids, ngram, samples);
  } else {
    const std::int32_t start = vocabulary.id(kSentenceStart), end = vocabulary.id(kSentenceEnd);
    PSTRAIN_ASSERT(start != 0 && end != 0, "sentence windows need <s> and <e> in the vocabulary");
    std::size_t first = 0;
    for (const std::size_t last : split.sentence_ends) {
      ids.assign(1, start);
      for (std::size_t i = first; i < last; ++i) ids.push_back(vocabulary.id(split.words[i]));
      ids.push_back(end);
      append_windows(ids, ngram, samples);
      first = last;
    }
  }
  tokens.ngram = static_cast<std::uint32_t>(ngram);
  tokens.vocab_size = static_cast<std::uint32_t>(vocabulary.size());
  tokens.windows = to_string(mode);
  samples.meta.sample_shape = {ngram - 1};
  samples.meta.num_classes = tokens.vocab_size;
  samples.meta.sample_count = samples.labels.size();
  samples.meta.tokens = std::move(tokens);
  return samples;
}

}  // namespace pstrain::data
