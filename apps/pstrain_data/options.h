#pragma once
// pstrain-data's validated command line, shared by the image converters (main.cc) and the text converters
// (text_convert.cc).
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "data/ngram.h"

namespace pstrain_data {

struct Options {
  std::string dataset;
  std::filesystem::path input;  // image datasets and brown
  std::filesystem::path output;
  std::size_t split_count = 0;
  std::optional<std::size_t> limit;       // training samples (text: windows)
  std::optional<std::size_t> test_limit;  // test samples (text: windows)

  // brown and text
  std::optional<std::filesystem::path> train_file, valid_file, test_file;  // text
  std::size_t ngram = 5;
  std::optional<std::size_t> min_count;  // default: brown 4 (Bengio et al.), text 1
  std::optional<std::size_t> max_vocab;
  pstrain::data::WindowMode windows = pstrain::data::WindowMode::kStream;
};

bool is_text_dataset(const std::string& dataset);  // brown | text

}  // namespace pstrain_data
