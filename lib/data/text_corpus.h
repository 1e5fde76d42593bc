#pragma once
// Tokenised text as pstrain-data's language-model converters read it: words in reading order, and where each
// sentence ends. Plain text files hold one sentence per line, words separated by white space (the format of
// PTB's ptb.train.txt); blank lines hold no sentence. The Brown corpus reader (data/brown.h) builds the same.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pstrain::data {

struct Corpus {
  std::vector<std::string> words;          // every word, in reading order
  std::vector<std::size_t> sentence_ends;  // sentence i is words [sentence_ends[i-1], sentence_ends[i]) (from 0)
  std::string source;                      // what was read, for the shards' attributes
};

// The bytes of a file that must be text: UTF-8 (ASCII included) without NUL bytes. Throws Error(kInputData)
// naming the file, and the line and byte of the first offence ("not a text file").
std::string read_text_file(const std::filesystem::path& path);

// Appends the sentences of `text` (one per line) to `corpus`; `to_word`, when given, turns each token (and its
// 1-based line) into the word to keep, or throws.
using TokenToWord = std::function<std::string(std::string_view token, std::size_t line)>;
void append_sentences(std::string_view text, Corpus& corpus, const TokenToWord& to_word = {});

// A plain text file of one sentence per line. Throws Error(kInputData) for a missing or non-text file.
Corpus read_text_corpus(const std::filesystem::path& path);

// Words [begin, end) with the sentence boundaries that fall inside (a sentence cut by `begin` or `end` keeps
// its part inside), source `source`.
Corpus slice_corpus(const Corpus& corpus, std::size_t begin, std::size_t end, std::string source);

}  // namespace pstrain::data
