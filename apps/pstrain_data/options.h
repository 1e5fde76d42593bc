#pragma once
// pstrain-data's validated command line, shared by the image converters (main.cc), the text converters
// (text_convert.cc) and the converters of users' own arrays (array_convert.cc).
#include <cstddef>
#include <cstdint>
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

  // npz, npy, csv (array_convert.h). npz reads `input` (and test_input); npy the four files below; csv reads
  // train_file, valid_file and test_file as text does.
  std::optional<std::filesystem::path> test_input;                  // npz
  std::optional<std::string> features_key, labels_key;              // npz
  std::optional<std::filesystem::path> features_file, labels_file;  // npy
  std::optional<std::filesystem::path> test_features_file, test_labels_file;
  std::string label_column = "last";                    // csv
  std::optional<double> valid_fraction, test_fraction;  // of the training samples, in (0, 1)
  std::optional<std::uint32_t> num_classes;             // default: the largest label + 1
  std::uint64_t seed = 1;                               // the shuffle before the splits
  bool keep_order = false;                              // no shuffle: splits in file order
};

bool is_text_dataset(const std::string& dataset);   // brown | text
bool is_array_dataset(const std::string& dataset);  // npz | npy | csv

}  // namespace pstrain_data
