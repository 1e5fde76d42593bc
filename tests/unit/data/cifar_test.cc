#include "data/cifar.h"

#include <gtest/gtest.h>

#include "data/split.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

using testing::Bytes;
using testing::expect_error;
using testing::TempDir;

constexpr std::size_t kPlane = 32 * 32;

// The byte of record `r` of batch `batch` at plane `c`, pixel (y, x): distinct for the pixels the tests check.
std::uint8_t pixel(std::size_t batch, std::size_t r, std::size_t c, std::size_t y, std::size_t x) {
  return static_cast<std::uint8_t>((batch * 37 + r * 11 + c * 83 + y * 7 + x * 3) % 256);
}
std::uint8_t label_of(std::size_t batch, std::size_t r) {
  return static_cast<std::uint8_t>((batch * 3 + r) % 10);
}

// A batch file of `records` records in the CIFAR-10 binary layout: label, then R, G, B planes, row-major.
Bytes batch_bytes(std::size_t batch, std::size_t records) {
  Bytes bytes;
  for (std::size_t r = 0; r < records; ++r) {
    bytes.push_back(label_of(batch, r));
    for (std::size_t c = 0; c < 3; ++c) {
      for (std::size_t y = 0; y < 32; ++y) {
        for (std::size_t x = 0; x < 32; ++x) bytes.push_back(pixel(batch, r, c, y, x));
      }
    }
  }
  return bytes;
}

// Batches 1..5 of `records` each, and a test batch (numbered 6) of `test_records`.
void write_batches(const std::filesystem::path& folder, std::size_t records, std::size_t test_records) {
  std::filesystem::create_directories(folder);
  for (std::size_t b = 1; b <= 5; ++b) {
    testing::write_raw(folder / ("data_batch_" + std::to_string(b) + ".bin"), batch_bytes(b, records));
  }
  testing::write_raw(folder / "test_batch.bin", batch_bytes(6, test_records));
}

float feature(const Samples& samples, std::size_t sample, std::size_t y, std::size_t x, std::size_t c) {
  return samples.features[sample * 3072 + (y * 32 + x) * 3 + c];
}

TEST(Cifar, RecordLayoutConstants) {
  EXPECT_EQ(kCifarPixelBytes, 3072u);
  EXPECT_EQ(kCifarRecordBytes, 3073u);
  EXPECT_EQ(batch_bytes(1, 5).size(), 5 * 3073u);
}

TEST(Cifar, TransposesPlanarRgbToChannelsLast) {
  TempDir dir;
  // Record 1 hand-built: every byte 0 except a few chosen ones, so a wrong index cannot land on a right value.
  Bytes bytes(2 * kCifarRecordBytes, 0);
  bytes[0] = 4;
  std::uint8_t* second = bytes.data() + kCifarRecordBytes;
  second[0] = 9;
  second[1 + 0 * kPlane + 0 * 32 + 0] = 255;    // R at (0, 0)
  second[1 + 1 * kPlane + 0 * 32 + 1] = 51;     // G at (0, 1)
  second[1 + 2 * kPlane + 1 * 32 + 0] = 102;    // B at (1, 0)
  second[1 + 2 * kPlane + 31 * 32 + 31] = 153;  // B at (31, 31): the last byte of the record
  second[1 + 0 * kPlane + 5 * 32 + 17] = 204;   // R at (5, 17)
  testing::write_raw(dir / "one.bin", bytes);

  const Samples samples = read_cifar10_batches({dir / "one.bin"});
  ASSERT_EQ(samples.features.size(), 2 * 3072u);
  EXPECT_EQ(samples.labels, (std::vector<std::int32_t>{4, 9}));
  for (std::size_t i = 0; i < 3072; ++i) EXPECT_EQ(samples.features[i], 0.0f) << "sample 0, feature " << i;

  const float* s = samples.features.data() + 3072;
  EXPECT_EQ(s[0], 1.0f);                            // (0,0) R
  EXPECT_FLOAT_EQ(s[(0 * 32 + 1) * 3 + 1], 0.2f);   // (0,1) G
  EXPECT_FLOAT_EQ(s[(1 * 32 + 0) * 3 + 2], 0.4f);   // (1,0) B
  EXPECT_FLOAT_EQ(s[3071], 0.6f);                   // (31,31) B
  EXPECT_FLOAT_EQ(s[(5 * 32 + 17) * 3 + 0], 0.8f);  // (5,17) R
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < 3072; ++i) nonzero += s[i] != 0.0f;
  EXPECT_EQ(nonzero, 5u);
}

TEST(Cifar, ReadsFolderOfBatches) {
  TempDir dir;
  write_batches(dir.path(), 5, 4);
  const Cifar10Files files = find_cifar10_files(dir.path());
  ASSERT_EQ(files.train.size(), 5u);
  EXPECT_EQ(files.train[0], dir / "data_batch_1.bin");
  EXPECT_EQ(files.train[4], dir / "data_batch_5.bin");
  EXPECT_EQ(files.test, dir / "test_batch.bin");

  const Samples train = read_cifar10_batches(files.train);
  EXPECT_EQ(train.meta.dataset, "cifar10");
  EXPECT_EQ(train.meta.sample_shape, (std::vector<std::uint64_t>{32, 32, 3}));
  EXPECT_EQ(train.meta.sample_size(), 3072u);
  EXPECT_EQ(train.meta.num_classes, 10u);
  EXPECT_EQ(train.meta.sample_count, 25u);
  EXPECT_EQ(train.meta.source,
            "data_batch_1.bin, data_batch_2.bin, data_batch_3.bin, data_batch_4.bin, data_batch_5.bin");
  ASSERT_EQ(train.labels.size(), 25u);
  ASSERT_EQ(train.features.size(), 25u * 3072);
  // Batches in order, records in order; every pixel of every sample at its HWC place.
  for (std::size_t b = 1; b <= 5; ++b) {
    for (std::size_t r = 0; r < 5; ++r) {
      const std::size_t sample = (b - 1) * 5 + r;
      EXPECT_EQ(train.labels[sample], label_of(b, r));
      for (std::size_t y = 0; y < 32; ++y) {
        for (std::size_t x = 0; x < 32; ++x) {
          for (std::size_t c = 0; c < 3; ++c) {
            ASSERT_EQ(feature(train, sample, y, x, c), static_cast<float>(pixel(b, r, c, y, x)) / 255.0f)
                << "batch " << b << " record " << r << " pixel (" << y << ", " << x << ") channel " << c;
          }
        }
      }
    }
  }

  const Samples test = read_cifar10_batches({files.test});
  EXPECT_EQ(test.meta.sample_count, 4u);
  EXPECT_EQ(test.meta.source, "test_batch.bin");
  EXPECT_EQ(test.labels, (std::vector<std::int32_t>{8, 9, 0, 1}));
  EXPECT_FLOAT_EQ(feature(test, 3, 10, 20, 1), pixel(6, 3, 1, 10, 20) / 255.0f);
}

TEST(Cifar, AcceptsParentOfTheUnpackedFolder) {
  TempDir dir;
  write_batches(dir / kCifar10Folder, 1, 1);
  const Cifar10Files files = find_cifar10_files(dir.path());
  EXPECT_EQ(files.train[2], dir / kCifar10Folder / "data_batch_3.bin");
  EXPECT_EQ(files.test, dir / kCifar10Folder / "test_batch.bin");
}

TEST(Cifar, ValuesCoverZeroToOne) {
  TempDir dir;
  Bytes bytes(kCifarRecordBytes, 255);
  bytes[0] = 0;
  bytes[1] = 0;
  testing::write_raw(dir / "b.bin", bytes);
  const Samples samples = read_cifar10_batches({dir / "b.bin"});
  EXPECT_EQ(samples.features[0], 0.0f);
  EXPECT_EQ(samples.features[1], 1.0f);
  EXPECT_EQ(samples.features[3071], 1.0f);
}

TEST(Cifar, BadSize) {
  TempDir dir;
  Bytes bytes = batch_bytes(1, 2);
  bytes.push_back(7);
  testing::write_raw(dir / "odd.bin", bytes);
  expect_error([&] { read_cifar10_batches({dir / "odd.bin"}); }, ExitCode::kInputData,
               {"odd.bin", "size 6147 bytes", "not a positive multiple of the 3073-byte",
                "2 whole records and 1 bytes"});
}

TEST(Cifar, EmptyAndShortFiles) {
  TempDir dir;
  testing::write_raw(dir / "empty.bin", {});
  expect_error([&] { read_cifar10_batches({dir / "empty.bin"}); }, ExitCode::kInputData,
               {"empty.bin", "size 0 bytes", "not even one record"});
  testing::write_raw(dir / "short.bin", Bytes(3072, 1));
  expect_error([&] { read_cifar10_batches({dir / "short.bin"}); }, ExitCode::kInputData,
               {"short.bin", "size 3072 bytes"});
}

TEST(Cifar, BadSizeInOneOfSeveralFiles) {
  TempDir dir;
  write_batches(dir.path(), 2, 2);
  std::filesystem::resize_file(dir / "data_batch_4.bin", 3 * kCifarRecordBytes - 10);
  const Cifar10Files files = find_cifar10_files(dir.path());
  expect_error([&] { read_cifar10_batches(files.train); }, ExitCode::kInputData, {"data_batch_4.bin", "9209 bytes"});
}

TEST(Cifar, BadLabel) {
  TempDir dir;
  Bytes bytes = batch_bytes(2, 5);
  bytes[3 * kCifarRecordBytes] = 10;
  testing::write_raw(dir / "data_batch_2.bin", bytes);
  expect_error([&] { read_cifar10_batches({dir / "data_batch_2.bin"}); }, ExitCode::kInputData,
               {"data_batch_2.bin", "record 3", "byte offset 9219", "label 10", "0..9"});
}

TEST(Cifar, MissingFiles) {
  TempDir dir;
  write_batches(dir.path(), 1, 1);
  std::filesystem::remove(dir / "data_batch_3.bin");
  std::filesystem::remove(dir / "test_batch.bin");
  expect_error([&] { find_cifar10_files(dir.path()); }, ExitCode::kInputData,
               {dir.path().string(), "missing data_batch_3.bin, test_batch.bin", "data_batch_1.bin", "data_batch_5.bin",
                "cifar-10-batches-bin/", "cifar-10-binary.tar.gz"});
}

TEST(Cifar, EmptyFolderAndAdvice) {
  TempDir dir;
  expect_error([&] { find_cifar10_files(dir.path()); }, ExitCode::kInputData,
               {"missing data_batch_1.bin, data_batch_2.bin, data_batch_3.bin, data_batch_4.bin, data_batch_5.bin, "
                "test_batch.bin",
                "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"});
  testing::write_raw(dir / "cifar-10-binary.tar.gz", {1});
  expect_error([&] { find_cifar10_files(dir.path()); }, ExitCode::kInputData, {"unpack it first"});
  TempDir python;
  std::filesystem::create_directories(python / "cifar-10-batches-py");
  expect_error([&] { find_cifar10_files(python.path()); }, ExitCode::kInputData, {"Python (pickle) version"});
}

TEST(Cifar, MissingFileGivenDirectly) {
  TempDir dir;
  expect_error([&] { read_cifar10_batches({dir / "nope.bin"}); }, ExitCode::kInputData, {"nope.bin", "does not exist"});
}

// The trainer side reads back what the converter writes: shape, values and labels survive the shard format.
TEST(Cifar, RoundTripsThroughShards) {
  TempDir dir;
  write_batches(dir / "in", 3, 2);
  const Samples train = read_cifar10_batches(find_cifar10_files(dir / "in").train);
  const std::vector<Samples> shards = split_samples(train, 2);
  write_shard(dir / "train-00000.h5", shards[0]);
  const Samples back = read_shard(dir / "train-00000.h5");
  EXPECT_EQ(back.meta.dataset, "cifar10");
  EXPECT_EQ(back.meta.sample_shape, (std::vector<std::uint64_t>{32, 32, 3}));
  EXPECT_EQ(back.meta.num_classes, 10u);
  EXPECT_EQ(back.meta.sample_count, 8u);
  EXPECT_EQ(back.features, shards[0].features);
  EXPECT_EQ(back.labels, shards[0].labels);
}

}  // namespace
}  // namespace pstrain::data
