#pragma once
// HDF5 shard format shared by pstrain-data (writer) and the trainer (reader).
//
// One file per shard (train-00000.h5 ... and test.h5) holding:
//   /features  float32 [sample_count, sample_size]   values in [0, 1]
//   /labels    int32   [sample_count]                in [0, num_classes)
//   root attributes: dataset (string), sample_shape (uint64[]), num_classes (uint32),
//                    sample_count (uint64), source (string), format_version (uint32)
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pstrain::data {

struct ShardMeta {
  std::string dataset;                  // "fashion-mnist"
  std::vector<std::uint64_t> sample_shape;  // {28, 28} for grey images, {32, 32, 3} for CIFAR:
                                            // channels last (HWC), as the CNN reads them
  std::uint32_t num_classes = 0;
  std::uint64_t sample_count = 0;
  std::string source;                   // where the samples came from (input files)

  std::size_t sample_size() const;      // product of sample_shape
};

struct Samples {
  ShardMeta meta;
  std::vector<float> features;          // sample_count * sample_size, row-major
  std::vector<std::int32_t> labels;     // sample_count
};

// Writes atomically: a temporary name in the same folder, then rename. Throws pstrain::Error.
void write_shard(const std::filesystem::path& path, const Samples& samples);

// Reads only the attributes, validated against the dataset shapes. Throws pstrain::Error(kInputData)
// naming the file for anything missing, truncated, garbage or inconsistent.
ShardMeta read_shard_meta(const std::filesystem::path& path);

// Reads and validates everything: shapes and types, labels in [0, num_classes), features finite.
Samples read_shard(const std::filesystem::path& path);

// The train-NNNNN.h5 files of a data folder in index order (throws if the folder is missing or has none,
// or if the numbering has gaps), and the test.h5 path (throws if missing).
std::vector<std::filesystem::path> list_train_shards(const std::filesystem::path& folder);
std::filesystem::path test_shard_path(const std::filesystem::path& folder);

// Added for pstrain-data: file names inside a data folder, and removal of train shards left over from an
// earlier conversion with a larger split count (so that list_train_shards sees one consistent set).
inline constexpr const char* kTestShardFileName = "test.h5";
std::string train_shard_file_name(std::size_t index);  // "train-00007.h5"
// Removes train-NNNNN.h5 files with index >= first_index; returns what it removed. Throws Error(kOutput).
std::vector<std::filesystem::path> remove_train_shards_from(const std::filesystem::path& folder,
                                                            std::size_t first_index);

}  // namespace pstrain::data
