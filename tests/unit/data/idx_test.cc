#include "data/idx.h"

#include <gtest/gtest.h>

#include "test_files.h"

namespace pstrain::data {
namespace {

using testing::Bytes;
using testing::expect_error;
using testing::idx_bytes;
using testing::TempDir;

// Two 2x3 images and their labels.
const Bytes kPixels = {0, 51, 102, 153, 204, 255, 255, 0, 0, 0, 0, 1};
const Bytes kLabels = {3, 9};

struct IdxFiles {
  std::filesystem::path images, labels;
};

IdxFiles write_pair(const TempDir& dir, const Bytes& images, const Bytes& labels, bool gz = true) {
  IdxFiles files{dir / (gz ? "images.gz" : "images"), dir / (gz ? "labels.gz" : "labels")};
  (gz ? testing::write_gz : testing::write_raw)(files.images, images);
  (gz ? testing::write_gz : testing::write_raw)(files.labels, labels);
  return files;
}

Bytes good_images() {
  return idx_bytes(kIdxImagesMagic, {2, 2, 3}, kPixels);
}
Bytes good_labels() {
  return idx_bytes(kIdxLabelsMagic, {2}, kLabels);
}

void check_samples(const Samples& samples, const IdxFiles& files) {
  EXPECT_EQ(samples.meta.dataset, "fashion-mnist");
  EXPECT_EQ(samples.meta.sample_shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(samples.meta.num_classes, 10u);
  EXPECT_EQ(samples.meta.sample_count, 2u);
  EXPECT_EQ(samples.meta.source, files.images.filename().string() + ", " + files.labels.filename().string());
  ASSERT_EQ(samples.features.size(), kPixels.size());
  for (std::size_t i = 0; i < kPixels.size(); ++i) EXPECT_FLOAT_EQ(samples.features[i], kPixels[i] / 255.0f);
  EXPECT_EQ(samples.features[5], 1.0f);
  EXPECT_EQ(samples.features[0], 0.0f);
  EXPECT_EQ(samples.labels, (std::vector<std::int32_t>{3, 9}));
}

TEST(Idx, ReadsGzipPair) {
  TempDir dir;
  const IdxFiles files = write_pair(dir, good_images(), good_labels());
  check_samples(read_idx_pair(files.images, files.labels, "fashion-mnist", 10), files);
}

TEST(Idx, ReadsUncompressedPair) {
  TempDir dir;
  const IdxFiles files = write_pair(dir, good_images(), good_labels(), /*gz=*/false);
  check_samples(read_idx_pair(files.images, files.labels, "fashion-mnist", 10), files);
}

TEST(Idx, ReadsDims) {
  TempDir dir;
  testing::write_gz(dir / "i.gz", good_images());
  const IdxArray array = read_idx_images(dir / "i.gz");
  EXPECT_EQ(array.dims, (std::vector<std::uint32_t>{2, 2, 3}));
  EXPECT_EQ(array.values, kPixels);
}

TEST(Idx, MissingFile) {
  TempDir dir;
  expect_error([&] { read_idx_images(dir / "nope.gz"); }, ExitCode::kInputData, {"nope.gz", "does not exist"});
}

TEST(Idx, BadMagic) {
  TempDir dir;
  const IdxFiles files = write_pair(dir, idx_bytes(0x00000903, {2, 2, 3}, kPixels), good_labels());
  expect_error([&] { read_idx_pair(files.images, files.labels, "mnist", 10); }, ExitCode::kInputData,
               {"images.gz", "bad magic number 0x00000903", "expected 0x00000803"});
}

TEST(Idx, LabelsFileGivenAsImages) {
  TempDir dir;
  testing::write_gz(dir / "labels.gz", good_labels());
  expect_error([&] { read_idx_images(dir / "labels.gz"); }, ExitCode::kInputData,
               {"labels.gz", "bad magic number 0x00000801"});
}

TEST(Idx, NotGzipNotIdx) {
  TempDir dir;
  testing::write_raw(dir / "text", Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
  expect_error([&] { read_idx_labels(dir / "text"); }, ExitCode::kInputData, {"text", "bad magic number"});
}

TEST(Idx, EmptyFile) {
  TempDir dir;
  testing::write_gz(dir / "empty.gz", {});
  expect_error([&] { read_idx_images(dir / "empty.gz"); }, ExitCode::kInputData,
               {"empty.gz", "truncated", "ends after 0 bytes"});
}

TEST(Idx, TruncatedHeader) {
  TempDir dir;
  Bytes bytes = good_images();
  bytes.resize(10);
  testing::write_gz(dir / "i.gz", bytes);
  expect_error([&] { read_idx_images(dir / "i.gz"); }, ExitCode::kInputData, {"i.gz", "truncated", "header"});
}

TEST(Idx, TruncatedData) {
  TempDir dir;
  Bytes pixels = kPixels;
  pixels.pop_back();
  const IdxFiles files = write_pair(dir, idx_bytes(kIdxImagesMagic, {2, 2, 3}, pixels), good_labels());
  expect_error([&] { read_idx_pair(files.images, files.labels, "mnist", 10); }, ExitCode::kInputData,
               {"images.gz", "truncated: header announces 2 images of 2x3 (28 bytes)", "the file ends after 27 bytes"});
}

TEST(Idx, TruncatedUncompressedData) {
  TempDir dir;
  testing::write_raw(dir / "labels", idx_bytes(kIdxLabelsMagic, {5}, kLabels));
  expect_error([&] { read_idx_labels(dir / "labels"); }, ExitCode::kInputData,
               {"labels", "truncated", "5 labels", "ends after 10 bytes"});
}

TEST(Idx, CutGzipStream) {
  // A download cut off mid-stream: the gzip member has no end marker.
  TempDir dir;
  Bytes big(20000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>((i * 7919) >> 3);
  testing::write_gz(dir / "full.gz", idx_bytes(kIdxImagesMagic, {20, 1000, 1}, big));
  Bytes compressed = testing::read_raw(dir / "full.gz");
  compressed.resize(compressed.size() / 2);
  testing::write_raw(dir / "cut.gz", compressed);
  expect_error([&] { read_idx_images(dir / "cut.gz"); }, ExitCode::kInputData,
               {"cut.gz", "truncated: header announces 20 images of 1000x1", "the gzip stream is cut off"});
}

TEST(Idx, GzipMissingOnlyTrailer) {
  // All data decompresses but the CRC/length trailer is gone: still a damaged file.
  TempDir dir;
  testing::write_gz(dir / "full.gz", good_labels());
  Bytes compressed = testing::read_raw(dir / "full.gz");
  compressed.resize(compressed.size() - 4);
  testing::write_raw(dir / "cut.gz", compressed);
  expect_error([&] { read_idx_labels(dir / "cut.gz"); }, ExitCode::kInputData, {"cut.gz", "truncated gzip"});
}

TEST(Idx, CorruptGzipData) {
  TempDir dir;
  testing::write_gz(dir / "full.gz", good_images());
  Bytes compressed = testing::read_raw(dir / "full.gz");
  compressed[compressed.size() - 6] ^= 0xFF;  // inside the CRC32: data decompresses, the check fails
  testing::write_raw(dir / "bad.gz", compressed);
  expect_error([&] { read_idx_images(dir / "bad.gz"); }, ExitCode::kInputData, {"bad.gz", "corrupt gzip"});
}

TEST(Idx, TrailingBytes) {
  TempDir dir;
  Bytes pixels = kPixels;
  pixels.push_back(7);
  pixels.push_back(8);
  const IdxFiles files = write_pair(dir, idx_bytes(kIdxImagesMagic, {2, 2, 3}, pixels), good_labels());
  expect_error([&] { read_idx_pair(files.images, files.labels, "mnist", 10); }, ExitCode::kInputData,
               {"images.gz", "trailing data", "holds 2 more bytes"});
}

TEST(Idx, CountMismatch) {
  TempDir dir;
  const IdxFiles files = write_pair(dir, good_images(), idx_bytes(kIdxLabelsMagic, {3}, {1, 2, 3}));
  expect_error([&] { read_idx_pair(files.images, files.labels, "mnist", 10); }, ExitCode::kInputData,
               {"labels.gz", "holds 3 labels", "holds 2 images"});
}

TEST(Idx, LabelOutOfRange) {
  TempDir dir;
  const IdxFiles files = write_pair(dir, good_images(), idx_bytes(kIdxLabelsMagic, {2}, {1, 10}));
  expect_error([&] { read_idx_pair(files.images, files.labels, "mnist", 10); }, ExitCode::kInputData,
               {"labels.gz", "label 10 of sample 1", "out of range"});
}

TEST(Idx, ZeroDimension) {
  TempDir dir;
  testing::write_gz(dir / "i.gz", idx_bytes(kIdxImagesMagic, {2, 0, 3}, {}));
  expect_error([&] { read_idx_images(dir / "i.gz"); }, ExitCode::kInputData, {"i.gz", "dimension 1", "is 0"});
}

TEST(Idx, WrongNumberOfDims) {
  // A 2-D uint8 file (magic 0x00000802) offered as images.
  TempDir dir;
  testing::write_gz(dir / "i.gz", idx_bytes(0x00000802, {2, 6}, kPixels));
  expect_error([&] { read_idx_images(dir / "i.gz"); }, ExitCode::kInputData,
               {"i.gz", "bad magic number 0x00000802", "0x00000803"});
}

TEST(Idx, HugeHeaderWithoutDataIsTruncatedNotAnAllocation) {
  TempDir dir;
  testing::write_gz(dir / "i.gz", idx_bytes(kIdxImagesMagic, {0xFFFFFFFF, 0xFFFF, 0xFFFF}, {1, 2, 3}));
  expect_error([&] { read_idx_images(dir / "i.gz"); }, ExitCode::kInputData, {"i.gz"});
}

}  // namespace
}  // namespace pstrain::data
