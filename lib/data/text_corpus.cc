#include "data/text_corpus.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace pstrain::data {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void not_text(const fs::path& path, std::string_view text, std::size_t offset, const std::string& what) {
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  throw Error(ExitCode::kInputData,
              cat(path.string(), ": not a text file: line ", line, ", byte ", offset, " is ", what));
}

// Length of the UTF-8 sequence starting at text[i], or 0 when it is not well formed (overlong forms,
// surrogates and code points beyond U+10FFFF included).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

}  // namespace

std::string read_text_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ExitCode::kInputData, cat(path.string(), ": file does not exist"));
  if (!fs::is_regular_file(path, ec)) throw Error(ExitCode::kInputData, cat(path.string(), ": is not a file"));
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) throw Error(ExitCode::kInputData, cat(path.string(), ": cannot read"));
  std::string text = std::move(bytes).str();
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\0') not_text(path, text, i, "a NUL byte");
    const std::size_t length = utf8_length(text, i);
    if (length == 0) {
      not_text(path, text, i,
               cat("0x", "0123456789abcdef"[static_cast<unsigned char>(text[i]) >> 4],
                   "0123456789abcdef"[static_cast<unsigned char>(text[i]) & 15], ", not UTF-8"));
    }
    i += length;
  }
  return text;
}

void append_sentences(std::string_view text, Corpus& corpus, const TokenToWord& to_word) {
  std::size_t sentence_start = corpus.words.size();
  const auto end_sentence = [&] {  // blank lines hold no sentence
    if (corpus.words.size() > sentence_start) corpus.sentence_ends.push_back(corpus.words.size());
    sentence_start = corpus.words.size();
  };
  std::size_t i = 0, line = 1;
  while (i < text.size()) {
    if (text[i] == '\n') {
      end_sentence();
      ++i;
      ++line;
    } else if (is_space(text[i])) {
      ++i;
    } else {
      const std::size_t start = i;
      while (i < text.size() && text[i] != '\n' && !is_space(text[i])) ++i;
      const std::string_view token = text.substr(start, i - start);
      corpus.words.push_back(to_word ? to_word(token, line) : std::string(token));
    }
  }
  end_sentence();  // the last line needs no newline
}

Corpus read_text_corpus(const fs::path& path) {
  Corpus corpus;
  append_sentences(read_text_file(path), corpus);
  corpus.source = path.filename().string();
  return corpus;
}

Corpus slice_corpus(const Corpus& corpus, std::size_t begin, std::size_t end, std::string source) {
  PSTRAIN_ASSERT(begin <= end && end <= corpus.words.size(), "slice [", begin, ", ", end, ") of ", corpus.words.size(),
                 " words");
  Corpus part;
  part.words.assign(corpus.words.begin() + static_cast<std::ptrdiff_t>(begin),
                    corpus.words.begin() + static_cast<std::ptrdiff_t>(end));
  for (const std::size_t sentence_end : corpus.sentence_ends) {
    if (sentence_end > begin && sentence_end < end) part.sentence_ends.push_back(sentence_end - begin);
  }
  if (end > begin) part.sentence_ends.push_back(end - begin);  // the cut sentence (or the last one) ends here
  part.source = std::move(source);
  return part;
}

}  // namespace pstrain::data
