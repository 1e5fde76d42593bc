#include "nn/model_spec.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"

namespace pstrain::nn {

namespace {

bool is_name(std::string_view word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return false;
  for (const char c : word) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream stream{std::string(line)};
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

[[noreturn]] void fail(const std::string& source, int line, const std::string& problem) {
  throw Error(ExitCode::kUsage, cat(source, ":", line, ": ", problem));
}

NodeSpec parse_line(const std::vector<std::string>& words, const std::string& source, int line) {
  if (words.size() < 2) fail(source, line, cat("expected 'NAME TYPE [key=value ...]', got '", words[0], "'"));
  NodeSpec node;
  node.name = words[0];
  node.type = words[1];
  node.line = line;
  if (!is_name(node.name)) fail(source, line, cat("'", node.name, "' is not a layer name ([A-Za-z_][A-Za-z0-9_]*)"));
  if (node.name == "input") fail(source, line, "'input' names the data and cannot name a layer");
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::size_t equals = words[i].find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == words[i].size()) {
      fail(source, line, cat("expected key=value, got '", words[i], "'"));
    }
    const std::string key = words[i].substr(0, equals);
    const std::string value = words[i].substr(equals + 1);
    if (key == "inputs") {
      if (!node.inputs.empty()) fail(source, line, "inputs= given twice");
      node.inputs = split(value, ',');
      node.inputs_named = true;
      std::set<std::string> seen;
      for (const std::string& input : node.inputs) {
        if (!is_name(input)) fail(source, line, cat("'", input, "' in inputs= is not a layer name"));
        if (!seen.insert(input).second) fail(source, line, cat("inputs= names '", input, "' twice"));
      }
    } else if (key == "loss") {
      if (!node.loss.empty()) fail(source, line, "loss= given twice");
      node.loss = value;
    } else if (!node.attributes.emplace(key, value).second) {
      fail(source, line, cat("attribute '", key, "' given twice"));
    }
  }
  return node;
}

}  // namespace

std::string ModelSpec::where(const NodeSpec& node) const {
  return cat(source, ":", node.line, ": ");
}

ModelSpec parse_model_text(std::string_view text, const std::string& source) {
  ModelSpec spec;
  spec.source = source;
  spec.text = std::string(text);
  std::set<std::string> names;
  int line_number = 0;
  for (std::string_view rest = text; !rest.empty() || line_number == 0;) {
    const std::size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    ++line_number;
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const std::vector<std::string> words = words_of(line);
    if (words.empty()) continue;
    NodeSpec node = parse_line(words, source, line_number);
    if (!names.insert(node.name).second)
      fail(source, line_number, cat("a layer named '", node.name, "' already exists"));
    if (node.inputs.empty()) node.inputs = {spec.nodes.empty() ? std::string("input") : spec.nodes.back().name};
    spec.nodes.push_back(std::move(node));
  }
  if (spec.nodes.empty()) throw Error(ExitCode::kUsage, cat(source, ": the model description has no layers"));
  return spec;
}

ModelSpec read_model_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ExitCode::kUsage, cat("--model-file ", path.string(), ": cannot be read"));
  std::ostringstream text;
  text << file.rdbuf();
  return parse_model_text(text.str(), path.string());
}

}  // namespace pstrain::nn
