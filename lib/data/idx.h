#pragma once
// Reader for the IDX format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
// a big-endian header {0, 0, element type, rank} followed by `rank` uint32 dimensions and the raw elements.
// Files may be gzip-compressed (as distributed) or already unpacked.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/shard.h"

namespace pstrain::data {

inline constexpr std::uint32_t kIdxImagesMagic = 0x00000803;  // uint8 elements, 3 dimensions
inline constexpr std::uint32_t kIdxLabelsMagic = 0x00000801;  // uint8 elements, 1 dimension

// One IDX file of uint8 elements, validated: magic number, every dimension > 0, and exactly the announced
// number of bytes (a shorter file is truncated, a longer one has trailing garbage).
struct IdxArray {
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> values;  // product(dims) bytes, row-major
};

// Throws Error(kInputData) naming the file and the problem.
IdxArray read_idx_images(const std::filesystem::path& path);  // dims {count, rows, cols}
IdxArray read_idx_labels(const std::filesystem::path& path);  // dims {count}

// Reads an images file and its labels file into samples: features are bytes / 255 (float32 in [0, 1]),
// meta.sample_shape = {rows, cols}, meta.source = the two file names. Checks that both files hold the same
// number of samples and that every label is below num_classes. Throws Error(kInputData).
Samples read_idx_pair(const std::filesystem::path& images, const std::filesystem::path& labels,
                      const std::string& dataset_name, std::uint32_t num_classes);

}  // namespace pstrain::data
