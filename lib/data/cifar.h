#pragma once
// Reader for the binary version of CIFAR-10 (https://www.cs.toronto.edu/~kriz/cifar.html,
// cifar-10-binary.tar.gz, which unpacks to cifar-10-batches-bin/):
//   data_batch_1.bin ... data_batch_5.bin (training) and test_batch.bin, each a plain sequence of records
//   {1 label byte (0..9), 1024 red bytes, 1024 green bytes, 1024 blue bytes}, every plane row-major 32x32.
// The distributed files hold 10000 records each; any positive whole number of records is accepted so that
// small samples work too.
//
// Samples come out channels last (HWC) as the CNN reads them: pixel (y, x) channel c is feature
// (y * 32 + x) * 3 + c, as bytes / 255 (float32 in [0, 1]); sample_shape {32, 32, 3}.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "data/shard.h"

namespace pstrain::data {

inline constexpr std::size_t kCifarSide = 32;
inline constexpr std::size_t kCifarChannels = 3;
inline constexpr std::size_t kCifarPixelBytes = kCifarSide * kCifarSide * kCifarChannels;  // 3072
inline constexpr std::size_t kCifarRecordBytes = 1 + kCifarPixelBytes;                     // 3073
inline constexpr std::uint32_t kCifar10Classes = 10;
inline constexpr const char* kCifar10Name = "cifar10";
inline constexpr const char* kCifar10Folder = "cifar-10-batches-bin";  // what the tarball unpacks to

// The six batch files of a CIFAR-10 folder.
struct Cifar10Files {
  std::vector<std::filesystem::path> train;  // data_batch_1.bin ... data_batch_5.bin
  std::filesystem::path test;                // test_batch.bin
};

// Finds the batch files in `input` itself or, failing that, in input/cifar-10-batches-bin/. Throws
// Error(kInputData) listing the expected files (and the missing ones) when the set is incomplete.
Cifar10Files find_cifar10_files(const std::filesystem::path& input);

// Reads one or more batch files, concatenated in order, into samples (dataset "cifar10", 10 classes).
// Every file is checked before any is read: it must exist and its size must be a positive multiple of
// 3073 bytes. Throws Error(kInputData) naming the file (and, for a label >= 10, the record).
Samples read_cifar10_batches(const std::vector<std::filesystem::path>& files);

}  // namespace pstrain::data
