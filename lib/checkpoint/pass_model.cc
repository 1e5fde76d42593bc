#include "checkpoint/pass_model.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/join_numbers.h"
#include "core/parse_number.h"

namespace pstrain::checkpoint {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// A non-negative integer that fits; Error(kInputData) naming the key otherwise.
std::uint64_t number(const std::map<std::string, std::string>& values, const std::string& key,
                     const std::string& where) {
  const auto found = values.find(key);
  if (found == values.end()) throw Error(ExitCode::kInputData, cat(where, ": no '", key, "' line"));
  if (const std::optional<std::uint64_t> value = parse_number<std::uint64_t>(found->second)) return *value;
  throw Error(ExitCode::kInputData, cat(where, ": ", key, " = '", found->second, "' is not a number"));
}

std::vector<std::size_t> shape(const std::string& text, const std::string& where) {
  std::vector<std::size_t> extents;
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    const std::uint64_t extent = number({{"input", trim(part)}}, "input", where);
    if (extent == 0) throw Error(ExitCode::kInputData, cat(where, ": input = '", text, "' has an empty axis"));
    extents.push_back(extent);
  }
  if (extents.empty()) throw Error(ExitCode::kInputData, cat(where, ": input is empty"));
  return extents;
}

// A double as text that reads back to the same bits.
std::string exact_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(ExitCode::kInputData, cat(path.string(), ": cannot be read"));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

std::string format_pass_model_info(const PassModelInfo& info) {
  return cat("# What this pass folder's model reads and predicts (pstrain evaluate, predict and export read it).\n",
             "source = ", info.source, "\ninput = ", join_numbers(info.input, ","), "\nclasses = ", info.classes,
             "\ndataset = ", info.dataset, "\ntokens = ", info.tokens ? "true" : "false",
             "\nvocab_size = ", info.vocab_size, "\ndata_dir = ", info.data_dir,
             "\ndata_fingerprint = ", info.data_fingerprint, "\n",
             info.training_click_rate ? cat("training_click_rate = ", exact_text(*info.training_click_rate), "\n")
                                      : std::string());
}

PassModelInfo parse_pass_model_info(const std::string& text, const std::string& where) {
  std::map<std::string, std::string> values;
  std::istringstream lines(text);
  int number_of_line = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number_of_line;
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    const std::size_t equals = line.find('=');
    if (equals == std::string::npos) {
      throw Error(ExitCode::kInputData, cat(where, ":", number_of_line, ": expected 'key = value'"));
    }
    values[trim(line.substr(0, equals))] = trim(line.substr(equals + 1));
  }
  PassModelInfo info;
  info.source = values["source"];
  info.input = shape(values.count("input") ? values["input"] : "", where);
  info.classes = number(values, "classes", where);
  if (info.classes == 0) throw Error(ExitCode::kInputData, cat(where, ": classes = 0"));
  info.dataset = values["dataset"];
  info.tokens = values["tokens"] == "true";
  info.vocab_size = static_cast<std::uint32_t>(number(values, "vocab_size", where));
  info.data_dir = values["data_dir"];
  info.data_fingerprint = values["data_fingerprint"];
  if (values.count("training_click_rate")) {
    const std::optional<double> rate = parse_number<double>(values["training_click_rate"]);
    if (!rate || !(*rate >= 0 && *rate <= 1)) {
      throw Error(ExitCode::kInputData,
                  cat(where, ": training_click_rate = '", values["training_click_rate"], "' is not a share in [0, 1]"));
    }
    info.training_click_rate = rate;
  }
  return info;
}

std::vector<std::pair<std::string, std::string>> pass_model_files(const std::string& description,
                                                                  const PassModelInfo& info) {
  return {{kModelTextFile, description}, {kModelInfoFile, format_pass_model_info(info)}};
}

std::optional<PassModel> read_pass_model(const fs::path& pass_dir) {
  const bool has_text = fs::exists(pass_dir / kModelTextFile);
  const bool has_info = fs::exists(pass_dir / kModelInfoFile);
  if (!has_text && !has_info) return std::nullopt;
  if (!has_text || !has_info) {
    throw Error(ExitCode::kInputData, cat(pass_dir.string(), " has ", has_text ? kModelTextFile : kModelInfoFile,
                                          " without ", has_text ? kModelInfoFile : kModelTextFile));
  }
  PassModel model;
  model.description = read_text(pass_dir / kModelTextFile);
  model.info = parse_pass_model_info(read_text(pass_dir / kModelInfoFile), (pass_dir / kModelInfoFile).string());
  return model;
}

}  // namespace pstrain::checkpoint
