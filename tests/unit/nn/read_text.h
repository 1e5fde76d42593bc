#pragma once
// A shipped file's whole text, for the tests that compare examples/models with the presets.
#include <fstream>
#include <sstream>
#include <string>

namespace pstrain::nn::testing {

inline std::string read_text(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace pstrain::nn::testing
