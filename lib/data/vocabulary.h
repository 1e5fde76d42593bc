#pragma once
// The vocabulary of a language-model data folder, and its file vocab.txt: one word per line, the id is the
// line number from 0, every line ends with '\n'. Id 0 is always <unk>, which stands for every word outside the
// vocabulary; with sentence windows (data/ngram.h) ids 1 and 2 are the sentence marks <s> and <e>. The other
// words follow by descending count in the training text, ties in byte order, so a vocabulary is a function of
// the training text and the rule alone.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/shard.h"

namespace pstrain::data {

inline constexpr const char* kVocabularyFileName = "vocab.txt";
inline constexpr const char* kUnknownWord = "<unk>";

struct VocabularyRule {
  std::size_t min_count = 1;                        // words seen fewer times in training become <unk>
  std::optional<std::size_t> max_vocab;             // at most this many entries, reserved ones included
  std::vector<std::string> reserved{kUnknownWord};  // the first ids, always present; <unk> first

  // "words seen 4 times or more in the training text (3 or fewer become <unk>), at most ... entries; ..."
  std::string describe() const;
};

class Vocabulary {
 public:
  // Counts the training words and applies the rule. A literal <unk> in the text counts as the unknown word.
  // Throws Error(kUsage) when max_vocab leaves no room for a word beyond the reserved ones.
  static Vocabulary build(const std::vector<std::string>& training_words, const VocabularyRule& rule);
  // From the words of vocab.txt, in id order (read_vocabulary checks them first).
  explicit Vocabulary(std::vector<std::string> words);

  std::size_t size() const { return words_.size(); }
  const std::vector<std::string>& words() const { return words_; }
  // The word's id, or 0 (<unk>) for a word outside the vocabulary.
  std::int32_t id(std::string_view word) const;
  // The contents of vocab.txt.
  std::string file_text() const;

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, std::int32_t> ids_;
};

// CRC-32 (zlib's) of bytes: the shards' vocab_crc32 is this of vocab.txt's contents.
std::uint32_t text_crc32(std::string_view bytes);

// Reads and checks a vocab.txt: text, every line a word without white space, no word twice, <unk> first, at
// most kMaxVocabularySize lines. Throws Error(kInputData) naming the file and line.
Vocabulary read_vocabulary(const std::filesystem::path& path);

// Checks that FOLDER/vocab.txt is the vocabulary the token shards were written with: same CRC-32 and size.
// Throws Error(kInputData) naming the file and what differs.
void check_vocabulary_file(const std::filesystem::path& folder, const TokenMeta& tokens);

}  // namespace pstrain::data
