#pragma once
// What a pass folder says about its model, so that `pstrain evaluate`, `predict` and `export` need no flags
// repeated (lib/inference, lib/export): two small text files the trainer writes into every pass folder.
//   model.txt  the model description (model-file format, nn/model_spec.h): the run's --model-file, or the text
//              of its preset; usable as it is with --model-file.
//   model.ini  `key = value` lines: input (the sample shape the model was planned for, "28,28,1"), classes,
//              dataset, tokens (true for token shards), vocab_size, data_dir and data_fingerprint (the test
//              shard's CRC-32, as provenance.json gives it).
// Pass folders written before these files existed have neither; their readers then take the model from flags.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pstrain::checkpoint {

inline constexpr const char* kModelTextFile = "model.txt";
inline constexpr const char* kModelInfoFile = "model.ini";

struct PassModelInfo {
  std::string source;              // "preset mlp" or the model file's path, as the run named it
  std::vector<std::size_t> input;  // one sample as the model reads it ({28, 28, 1})
  std::size_t classes = 0;
  std::string dataset;  // "fashion-mnist"
  bool tokens = false;  // trained on token shards (a language model)
  std::uint32_t vocab_size = 0;
  std::string data_dir;          // where the run read its data
  std::string data_fingerprint;  // "test.h5:1a2b3c4d"
  // CTR data: the share of clicks among the training samples, the baseline of normalized entropy (test_ne) that
  // pstrain evaluate reports; absent otherwise (and in folders written before it was recorded).
  std::optional<double> training_click_rate;
};

// The two files' names and contents, for write_pass_folder's `texts`.
std::vector<std::pair<std::string, std::string>> pass_model_files(const std::string& description,
                                                                  const PassModelInfo& info);

// The model.ini text and back. parse throws Error(kInputData) naming `where` and the line for a malformed file.
std::string format_pass_model_info(const PassModelInfo& info);
PassModelInfo parse_pass_model_info(const std::string& text, const std::string& where);

// Both files of a pass folder, or nullopt when the folder has neither (written before they existed); one
// without the other is Error(kInputData).
struct PassModel {
  std::string description;
  PassModelInfo info;
};
std::optional<PassModel> read_pass_model(const std::filesystem::path& pass_dir);

}  // namespace pstrain::checkpoint
