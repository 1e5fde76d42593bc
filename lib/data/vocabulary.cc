#include "data/vocabulary.h"

#include <zlib.h>

#include <algorithm>

#include "core/error.h"
#include "data/text_corpus.h"

namespace pstrain::data {

namespace fs = std::filesystem;

std::string VocabularyRule::describe() const {
  std::string text =
      cat("words seen ", min_count, min_count == 1 ? " time" : " times", " or more in the training text");
  if (min_count > 1) text += cat(" (", min_count - 1, " or fewer become ", kUnknownWord, ")");
  if (max_vocab) text += cat(", at most ", *max_vocab, " entries (the most frequent)");
  text += "; ids: ";
  for (std::size_t i = 0; i < reserved.size(); ++i) text += cat(i, " ", reserved[i], ", ");
  return text + "then by descending training count, ties in byte order";
}

Vocabulary::Vocabulary(std::vector<std::string> words) : words_(std::move(words)) {
  for (std::size_t i = 0; i < words_.size(); ++i) ids_.emplace(words_[i], static_cast<std::int32_t>(i));
}

Vocabulary Vocabulary::build(const std::vector<std::string>& training_words, const VocabularyRule& rule) {
  PSTRAIN_ASSERT(!rule.reserved.empty() && rule.reserved[0] == kUnknownWord, "the first reserved word must be <unk>");
  PSTRAIN_ASSERT(rule.min_count >= 1, "min_count ", rule.min_count);
  if (rule.max_vocab && *rule.max_vocab <= rule.reserved.size()) {
    throw Error(ExitCode::kUsage, cat("--max-vocab ", *rule.max_vocab, " leaves no room for words: the vocabulary ",
                                      "already holds ", rule.reserved.size(), " reserved entries"));
  }
  std::unordered_map<std::string_view, std::size_t> counts;
  for (const std::string& word : training_words) ++counts[word];
  for (const std::string& reserved : rule.reserved) counts.erase(reserved);

  std::vector<std::pair<std::string_view, std::size_t>> kept;
  for (const auto& entry : counts) {
    if (entry.second >= rule.min_count) kept.push_back(entry);
  }
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> words = rule.reserved;
  const std::size_t limit = std::min<std::size_t>(rule.max_vocab.value_or(kMaxVocabularySize), kMaxVocabularySize);
  for (const auto& [word, count] : kept) {
    if (words.size() >= limit) break;
    words.emplace_back(word);
  }
  return Vocabulary(std::move(words));
}

std::int32_t Vocabulary::id(std::string_view word) const {
  const auto found = ids_.find(std::string(word));
  return found == ids_.end() ? 0 : found->second;
}

std::string Vocabulary::file_text() const {
  std::string text;
  for (const std::string& word : words_) text += word + '\n';
  return text;
}

std::uint32_t text_crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large inputs in pieces.
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t at = 0; at < bytes.size(); at += kPiece) {
    const std::size_t length = std::min(kPiece, bytes.size() - at);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(length));
  }
  return static_cast<std::uint32_t>(crc);
}

namespace {

std::vector<std::string> vocabulary_words(const fs::path& path, std::string_view text) {
  const auto bad = [&](std::size_t line, const std::string& problem) {
    throw Error(ExitCode::kInputData, cat(path.string(), ":", line, ": ", problem,
                                          " (vocab.txt holds one word per line; convert the data again)"));
  };
  if (text.empty()) bad(1, "the vocabulary is empty");
  if (text.back() != '\n') bad(1 + std::count(text.begin(), text.end(), '\n'), "the last line has no newline");
  std::vector<std::string> words;
  std::unordered_map<std::string_view, std::size_t> seen;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string_view word = text.substr(start, end - start);
    const std::size_t line = words.size() + 1;
    if (word.empty()) bad(line, "empty line");
    if (word.find_first_of(" \t\r\v\f") != std::string_view::npos) bad(line, cat("'", word, "' holds white space"));
    if (const auto [at, fresh] = seen.emplace(word, line); !fresh) {
      bad(line, cat("'", word, "' is already on line ", at->second));
    }
    if (words.size() == kMaxVocabularySize) bad(line, cat("more than ", kMaxVocabularySize, " words"));
    words.emplace_back(word);
    start = end + 1;
  }
  if (words[0] != kUnknownWord) bad(1, cat("the first word is '", words[0], "', expected ", kUnknownWord));
  return words;
}

}  // namespace

Vocabulary read_vocabulary(const fs::path& path) {
  const std::string text = read_text_file(path);
  return Vocabulary(vocabulary_words(path, text));
}

void check_vocabulary_file(const fs::path& folder, const TokenMeta& tokens) {
  const fs::path path = folder / kVocabularyFileName;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw Error(ExitCode::kInputData, cat(path.string(), " is missing: token shards need the vocabulary they were ",
                                          "written with (convert the data again with pstrain-data)"));
  }
  const std::string text = read_text_file(path);
  const std::size_t size = vocabulary_words(path, text).size();
  const std::uint32_t crc = text_crc32(text);
  if (size != tokens.vocab_size || crc != tokens.vocab_crc32) {
    throw Error(ExitCode::kInputData,
                cat(path.string(), " does not match the shards: it holds ", size, " words (CRC-32 ", crc,
                    "), the shards were written with a vocabulary of ", tokens.vocab_size, " words (CRC-32 ",
                    tokens.vocab_crc32, "); keep each vocab.txt with its shards or convert the data again"));
  }
}

}  // namespace pstrain::data
