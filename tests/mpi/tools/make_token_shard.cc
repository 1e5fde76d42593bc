// Test tool: writes a token shard (N-gram windows) for the vocabulary of VOCAB_FILE whose every context id and
// label is ID, to build bad inputs (ids outside the vocabulary) next to shards that pstrain-data wrote.
//
// usage: make_token_shard PATH VOCAB_FILE NGRAM COUNT ID
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "data/shard.h"
#include "data/vocabulary.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: make_token_shard PATH VOCAB_FILE NGRAM COUNT ID\n";
    return 2;
  }
  std::ifstream vocab_file(argv[2], std::ios::binary);
  std::ostringstream vocab;
  vocab << vocab_file.rdbuf();
  const std::size_t ngram = std::strtoul(argv[3], nullptr, 10);
  const std::size_t count = std::strtoul(argv[4], nullptr, 10);
  const auto id = static_cast<std::int32_t>(std::strtol(argv[5], nullptr, 10));
  pstrain::data::Samples samples;
  pstrain::data::TokenMeta tokens;
  tokens.vocab_size = 0;
  for (const char c : vocab.str()) tokens.vocab_size += c == '\n' ? 1 : 0;
  tokens.ngram = static_cast<std::uint32_t>(ngram);
  tokens.vocab_crc32 = pstrain::data::text_crc32(vocab.str());
  tokens.corpus = tokens.split = tokens.vocab_rule = "make_token_shard";
  tokens.windows = "stream";
  samples.meta.dataset = "text";
  samples.meta.sample_shape = {ngram - 1};
  samples.meta.num_classes = tokens.vocab_size;
  samples.meta.sample_count = count;
  samples.meta.source = "make_token_shard";
  samples.meta.tokens = tokens;
  samples.features.assign(count * (ngram - 1), static_cast<float>(id));
  samples.labels.assign(count, 0);
  try {
    pstrain::data::write_shard(argv[1], samples);
  } catch (const std::exception& error) {
    std::cerr << "make_token_shard: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
