#pragma once
// A model description: the text of a model file (or of a built-in preset), parsed into nodes, before anything
// is checked against shapes. The format, one layer per line:
//
//   # comment (also after a line's content)
//   NAME  TYPE  [key=value ...]
//
// NAME is [A-Za-z_][A-Za-z0-9_]*, unique, and not "input" (the data). A layer reads the layer on the line above
// (the first one reads the data), or the layers listed in `inputs=NAME[,NAME...]` (residual add, concatenation),
// which may name `input`. A layer type that reads no layer (embedding_bag: its input is the batch's categorical
// fields) ignores the line above. The last line is the model's output: the logits the loss reads, and the only
// line that may say which loss with `loss=softmax|bce` (softmax cross-entropy by default). TYPE is one of the
// registered layer types (layer_registry.h); every other key is the type's own attribute. The whole format is
// documented for users in docs/model-files.md.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pstrain::nn {

struct NodeSpec {
  std::string name;
  std::string type;
  std::map<std::string, std::string> attributes;  // without "inputs"
  std::vector<std::string> inputs;                // never empty after parsing
  bool inputs_named = false;                      // by inputs=, rather than the line above
  std::string loss;                               // loss=, empty when not given
  int line = 0;                                   // 1-based line in the source
};

struct ModelSpec {
  std::string source;  // the file's path, or "preset NAME": errors say "SOURCE:LINE: ..."
  std::string text;    // the description itself (saved with a run's provenance)
  std::vector<NodeSpec> nodes;

  // "SOURCE:LINE: " for a node's line.
  std::string where(const NodeSpec& node) const;
};

// Throws Error(kUsage) naming SOURCE:LINE and the problem: a malformed line, a bad name, a duplicate name, an
// attribute given twice, an empty description.
ModelSpec parse_model_text(std::string_view text, const std::string& source);
// Reads and parses a model file; Error(kUsage) when it cannot be read.
ModelSpec read_model_file(const std::filesystem::path& path);

}  // namespace pstrain::nn
