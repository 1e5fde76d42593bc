#include "report/flat_json.h"

#include <cmath>
#include <cstdlib>

namespace pstrain::report {

namespace {

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\r' || text_[at_] == '\n'))
      ++at_;
  }
  bool take(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool done() {
    skip_space();
    return at_ == text_.size();
  }
  char peek() {
    skip_space();
    return at_ < text_.size() ? text_[at_] : '\0';
  }

  std::optional<std::string> string() {
    if (!take('"')) return std::nullopt;
    std::string out;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) return std::nullopt;
      const char e = text_[at_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (at_ + 4 > text_.size()) return std::nullopt;
          const long code = std::strtol(text_.substr(at_, 4).c_str(), nullptr, 16);
          at_ += 4;
          out += code < 0x80 ? static_cast<char>(code) : '?';  // metrics keys and modes are ASCII
          break;
        }
        default: out += e;
      }
    }
    return std::nullopt;
  }

  // A number, true/false/null or a (flat or nested) array, as its raw text.
  std::optional<std::string> raw_value() {
    skip_space();
    const std::size_t start = at_;
    if (peek() == '[') {
      int depth = 0;
      while (at_ < text_.size()) {
        const char c = text_[at_++];
        if (c == '[') ++depth;
        if (c == ']' && --depth == 0) return text_.substr(start, at_ - start);
      }
      return std::nullopt;
    }
    while (at_ < text_.size() && text_[at_] != ',' && text_[at_] != '}' && text_[at_] != ' ') ++at_;
    if (at_ == start) return std::nullopt;
    return text_.substr(start, at_ - start);
  }

 private:
  const std::string& text_;
  std::size_t at_ = 0;
};

}  // namespace

std::optional<std::map<std::string, std::string>> parse_flat_json(const std::string& line) {
  Reader reader(line);
  std::map<std::string, std::string> object;
  if (!reader.take('{')) return std::nullopt;
  if (reader.take('}')) return reader.done() ? std::optional(object) : std::nullopt;
  while (true) {
    const auto key = reader.string();
    if (!key || !reader.take(':')) return std::nullopt;
    const auto value = reader.peek() == '"' ? reader.string() : reader.raw_value();
    if (!value) return std::nullopt;
    object[*key] = *value;
    if (reader.take(',')) continue;
    if (reader.take('}')) break;
    return std::nullopt;
  }
  if (!reader.done()) return std::nullopt;
  return object;
}

std::optional<double> number_field(const std::map<std::string, std::string>& object, const std::string& key) {
  const auto found = object.find(key);
  if (found == object.end() || found->second.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(found->second.c_str(), &end);
  if (end != found->second.c_str() + found->second.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace pstrain::report
