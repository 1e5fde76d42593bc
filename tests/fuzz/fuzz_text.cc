// Text and vocabulary readers (pstrain-data text, vocab.txt of token data folders): the input is one file, read as
// a corpus of sentences, then cut into windows over a vocabulary built from it; and read as a vocab.txt.
#include "data/ngram.h"
#include "data/text_corpus.h"
#include "data/vocabulary.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  const auto input = fuzz::scratch() / "input-text";
  fuzz::write_file(input, {reinterpret_cast<const char*>(data), size});
  fuzz::expect_clean([&] {
    const data::Corpus corpus = data::read_text_corpus(input);
    data::VocabularyRule rule;
    rule.min_count = 2;
    rule.reserved = {data::kUnknownWord, data::kSentenceStart, data::kSentenceEnd};
    const data::Vocabulary vocabulary = data::Vocabulary::build(corpus.words, rule);
    for (const data::WindowMode mode : {data::WindowMode::kStream, data::WindowMode::kSentence}) {
      const data::Samples samples = data::make_windows(corpus, vocabulary, 3, mode, data::TokenMeta{});
      if (samples.features.size() != 2 * samples.labels.size()) std::abort();
    }
  });
  fuzz::expect_clean([&] { data::read_vocabulary(input); });
  return 0;
}
