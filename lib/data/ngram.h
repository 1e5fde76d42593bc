#pragma once
// N-gram windows: the samples of a language model. A window is N-1 context word ids (the features) and the
// id of the word that follows them (the label).
//   stream    the split is one stream of words, as Bengio et al. 2003 treat the Brown corpus: a window at
//             every word that has N-1 words before it, across sentence (and file) boundaries. Each split is its
//             own stream: its first N-1 words are context only.
//   sentence  each sentence on its own, as <s> w1 ... wk <e> (the PaddlePaddle imikolov reader): windows
//             never cross a sentence boundary; a sentence of fewer than N-2 words gives none.
#include <cstddef>
#include <string>

#include "data/shard.h"
#include "data/text_corpus.h"
#include "data/vocabulary.h"

namespace pstrain::data {

enum class WindowMode { kStream, kSentence };

inline constexpr const char* kSentenceStart = "<s>";
inline constexpr const char* kSentenceEnd = "<e>";
inline constexpr std::size_t kMaxNgram = 64;

std::string to_string(WindowMode mode);  // "stream" | "sentence"

// The windows of one split, as Samples with meta.tokens set from `tokens` (ngram, vocab_size and windows are
// filled in here) and sample_shape {N-1}, num_classes = vocabulary size. May return zero samples: the caller
// names the split in its error.
Samples make_windows(const Corpus& split, const Vocabulary& vocabulary, std::size_t ngram, WindowMode mode,
                     TokenMeta tokens);

}  // namespace pstrain::data
