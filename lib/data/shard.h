#pragma once
// HDF5 shard format shared by pstrain-data (writer) and the trainer (reader).
//
// One file per shard (train-00000.h5 ... and test.h5) holding:
//   /features  float32 [sample_count, sample_size]   values in [0, 1]
//              or, in token shards, int32 ids in [0, vocab_size)
//   /labels    int32   [sample_count]                in [0, num_classes)
//   root attributes: dataset (string), sample_shape (uint64[]), num_classes (uint32),
//                    sample_count (uint64), source (string), format_version (uint32)
//   pstrain-data writes the integers with these types; the reader takes any integer type up to 64 bits, signed
//   or unsigned, whose values fit (h5py writes Python ints as int64).
//   strings are fixed-length (format_version 2). Version 1 (pstrain-data before 2026-11-23) wrote them
//   variable-length, which HDF5 keeps in its global heap; the reader still accepts those, and accepts them in
//   version 2 files (h5py's default for str) whose folder has a MANIFEST that checks their bytes (shard_read.cc).
//   token shards (pstrain-data brown|text, N-gram windows) also: vocab_size (uint32), ngram (uint32),
//                    vocab_crc32 (uint32), corpus, split, vocab_rule, windows (strings); the presence of
//                    vocab_size is what makes a shard a token shard.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/file_manifest.h"
#include "core/jagged_ids.h"

namespace pstrain::data {

// What a token shard carries beyond ShardMeta: its samples are N-gram windows, N-1 context word ids and the
// next word's id as the label. Ids are int32 in the file and floats in Samples::features (the embedding layer
// reads them so), exact because vocab_size is at most kMaxVocabularySize.
struct TokenMeta {
  std::uint32_t vocab_size = 0;   // ids in [0, vocab_size); the folder's vocab.txt has this many lines
  std::uint32_t ngram = 0;        // samples hold ngram - 1 context ids
  std::uint32_t vocab_crc32 = 0;  // CRC-32 of vocab.txt's bytes: the vocabulary these ids index
  std::string corpus;             // which corpus, as read
  std::string split;              // which part of it (e.g. "train: words 0 to 799999 of 1161192")
  std::string vocab_rule;         // how the vocabulary was chosen
  std::string windows;            // "stream" or "sentence" (data/ngram.h)
};

// What a CTR shard (data/ctr/ctr_shard.h) carries beyond ShardMeta, read as Samples: its features are the dense
// ones (sample_shape {dense count}), its classes 2 (click or not), and each sample has a bag of raw 64-bit ids per
// categorical field (Samples::categorical).
struct CategoricalMeta {
  std::vector<std::string> field_names;  // "C1" ... "C26"
  std::vector<std::uint64_t> max_bag;    // per field: its longest bag (in this shard)
  bool labeled = true;                   // false: no labels (Criteo's own test file): for prediction only
};

inline constexpr std::uint32_t kMaxVocabularySize = 1u << 24;  // float32 holds every id below it exactly

struct ShardMeta {
  std::string dataset;                      // "fashion-mnist"
  std::vector<std::uint64_t> sample_shape;  // {28, 28} for grey images, {32, 32, 3} for CIFAR:
                                            // channels last (HWC), as the CNN reads them
  std::uint32_t num_classes = 0;
  std::uint64_t sample_count = 0;
  std::string source;                          // where the samples came from (input files)
  std::optional<TokenMeta> tokens;             // set for token shards only
  std::optional<CategoricalMeta> categorical;  // set for CTR shards only
  std::uint32_t format_version = 0;            // as read; pstrain-data writes hdf5::kFormatVersion

  std::size_t sample_size() const;  // product of sample_shape
};

// "28 x 28", "784": a sample shape as messages name it ("(none)" when empty).
std::string shape_text(const std::vector<std::uint64_t>& shape);

struct Samples {
  ShardMeta meta;
  std::vector<float> features;       // sample_count * sample_size, row-major (token shards: ids as floats)
  std::vector<std::int32_t> labels;  // sample_count (CTR shards without labels: -1)
  core::JaggedIds categorical;       // CTR shards: each sample's bags (field-major); no fields otherwise
};

// Writes atomically: a temporary name in the same folder, then rename. Throws pstrain::Error.
void write_shard(const std::filesystem::path& path, const Samples& samples);

// Reads only the attributes, validated against the dataset shapes. Throws pstrain::Error(kInputData)
// naming the file for anything missing, truncated, garbage or inconsistent.
ShardMeta read_shard_meta(const std::filesystem::path& path);

// Reads and validates everything: shapes and types, labels in [0, num_classes), features finite (token
// shards: every id in [0, vocab_size)).
Samples read_shard(const std::filesystem::path& path);
// A shard opened (and its attributes and shapes checked) once, to read a few of its samples at a time: what a
// trainer under dynamic dispatch does with every shard (run_common/trainer_samples.h). Throws Error(kInputData) as
// read_shard does.
class ShardRows {
 public:
  explicit ShardRows(const std::filesystem::path& path);
  ~ShardRows();
  ShardRows(ShardRows&&) noexcept;
  ShardRows(const ShardRows&) = delete;
  ShardRows& operator=(const ShardRows&) = delete;
  ShardRows& operator=(ShardRows&&) = delete;

  const ShardMeta& meta() const;
  // Samples `rows` (increasing), in that order, with read_shard's checks of their values.
  Samples read(std::span<const std::uint64_t> rows) const;

 private:
  struct Open;
  std::filesystem::path path_;
  std::unique_ptr<Open> open_;
};
// ShardRows(path).read(rows).
Samples read_shard_rows(const std::filesystem::path& path, std::span<const std::uint64_t> rows);

// The train-NNNNN.h5 files of a data folder in index order (throws if the folder is missing or has none,
// or if the numbering has gaps), and the test.h5 path (throws if missing).
std::vector<std::filesystem::path> list_train_shards(const std::filesystem::path& folder);
std::filesystem::path test_shard_path(const std::filesystem::path& folder);
// list_train_shards without the comparison with the folder's MANIFEST: what write_data_manifest lists, since the
// MANIFEST there may be an earlier conversion's, about to be replaced.
std::vector<std::filesystem::path> list_train_shards_as_found(const std::filesystem::path& folder);

// Added for pstrain-data: file names inside a data folder, and removal of train shards left over from an
// earlier conversion with a larger split count (so that list_train_shards sees one consistent set).
inline constexpr const char* kTestShardFileName = "test.h5";
inline constexpr const char* kValidShardFileName = "valid.h5";  // token folders with a validation split
// CTR folders also hold ctr_fields.tsv and ctr_conversion.txt (data/ctr_file_names.h).
std::string train_shard_file_name(std::size_t index);  // "train-00007.h5"
// Removes train-NNNNN.h5 files with index >= first_index; returns what it removed. Throws Error(kOutput).
std::vector<std::filesystem::path> remove_train_shards_from(const std::filesystem::path& folder,
                                                            std::size_t first_index);

// What pstrain-data writes into a data folder, found in `folder` (names, sorted): train-NNNNN.h5, test.h5,
// valid.h5, vocab.txt, MANIFEST, the temporary files of a shard write (NAME.tmp-PID) and the staging folders of a
// conversion (kConversionStagingPrefix...). Empty for a missing folder. pstrain-data refuses an --output holding
// any of them: a conversion never overwrites or mixes with an earlier one. Throws Error(kOutput) when the folder
// cannot be listed.
std::vector<std::string> conversion_files_in(const std::filesystem::path& folder);
// A conversion writes its files into FOLDER/<prefix><pid> and renames them into FOLDER at the end.
inline constexpr const char* kConversionStagingPrefix = ".pstrain-data-partial-";

// A data folder's MANIFEST (core/file_manifest.h, "pstrain-data 1"), written last by pstrain-data, lists every
// shard and vocab.txt with its size and CRC-32. The readers above check a shard against it before HDF5 opens the
// file, so that a truncated copy or a flipped bit is named as such instead of reaching HDF5's decoders, whose
// memory errors on malformed files we cannot fix (tests/fuzz/known-hdf5/README.md); list_train_shards checks that
// the folder holds exactly the train shards it lists. Folders without one (converted before 2026-11-24, or
// written through write_shard alone) are read unchecked.
inline constexpr ManifestKind kDataManifest{"pstrain-data", 1, "data folder"};

// Writes the MANIFEST of a converted folder: the train shards, test.h5, and valid.h5, vocab.txt, ctr_fields.tsv
// and ctr_conversion.txt where present.
void write_data_manifest(const std::filesystem::path& folder);

// Throws Error(kInputData) naming the file when its folder has a MANIFEST that does not list it or lists it with
// another size or checksum. Reads the whole file (about 4 GB/s here); nothing when the folder has no MANIFEST.
// A process checks each file once (by path, size and modification time). Returns whether the file was checked
// (false: no MANIFEST): only a checked file may hold variable-length strings of format_version 2 (shard_read.cc).
bool check_shard_against_manifest(const std::filesystem::path& path);

// The shard's CRC-32 as its folder's MANIFEST lists it (what the check above compares), or computed where the
// folder has none: the data fingerprint of provenance.json.
std::uint32_t shard_crc32(const std::filesystem::path& path);

}  // namespace pstrain::data
