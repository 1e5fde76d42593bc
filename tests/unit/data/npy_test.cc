// The .npy reader against files laid out as numpy.lib.format writes them (the CLI test, tests/unit/data/
// arrays_cli_test.sh, also reads files that NumPy itself wrote).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "data/npy.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

using testing::Bytes;
using testing::expect_error;
using testing::TempDir;

// A .npy file: magic, version, header length (2 bytes for 1.0, 4 for 2.0 and 3.0), the header padded with spaces and
// ended by a newline so that the data starts at a multiple of 64, as NumPy aligns it, then `data`.
Bytes npy_file(const std::string& header, const Bytes& data, int major = 1) {
  const std::size_t prefix = 6 + 2 + (major == 1 ? 2 : 4);
  std::string text = header;
  while ((prefix + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  Bytes bytes{0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major), 0};
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i)
    bytes.push_back(static_cast<std::uint8_t>(text.size() >> (8 * i)));
  bytes.insert(bytes.end(), text.begin(), text.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string header(const std::string& descr, const std::string& shape, bool fortran = false) {
  return cat("{'descr': '", descr, "', 'fortran_order': ", fortran ? "True" : "False", ", 'shape': ", shape, ", }");
}

template <typename T>
Bytes raw(const std::vector<T>& values) {
  Bytes bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

TEST(Npy, ParsesEveryAcceptedElementTypeWithItsSize) {
  const std::vector<std::tuple<std::string, NpyType, std::size_t>> types{
      {"|u1", NpyType::kUint8, 1},   {"|i1", NpyType::kInt8, 1},    {"<u2", NpyType::kUint16, 2},
      {"<i2", NpyType::kInt16, 2},   {"<u4", NpyType::kUint32, 4},  {"<i4", NpyType::kInt32, 4},
      {"<i8", NpyType::kInt64, 8},   {"<f4", NpyType::kFloat32, 4}, {"<f8", NpyType::kFloat64, 8},
      {"=f4", NpyType::kFloat32, 4},
  };
  for (const auto& [descr, type, size] : types) {
    const NpyArray array = parse_npy(npy_file(header(descr, "(2, 3)"), Bytes(6 * size, 7)), "a.npy");
    EXPECT_EQ(array.type, type) << descr;
    EXPECT_EQ(array.element_size(), size) << descr;
    EXPECT_EQ(array.shape, (std::vector<std::uint64_t>{2, 3})) << descr;
    EXPECT_EQ(array.data, Bytes(6 * size, 7)) << descr;
  }
}

TEST(Npy, ReadsVersionsTwoAndThreeWithTheirFourByteHeaderLength) {
  for (const int major : {2, 3}) {
    const NpyArray array = parse_npy(npy_file(header("<i8", "(4,)"), raw<std::int64_t>({0, 1, 2, 3}), major), "a.npy");
    EXPECT_EQ(array.shape, std::vector<std::uint64_t>{4});
    EXPECT_EQ(npy_labels(array, "a.npy"), (std::vector<std::int32_t>{0, 1, 2, 3}));
  }
}

TEST(Npy, ReadsKeysInAnyOrderDoubleQuotesAndPython2Longs) {
  const NpyArray array = parse_npy(npy_file("{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"<f4\"}",
                                            raw<float>({0.5f, -2.0f})),
                                   "a.npy");
  EXPECT_EQ(array.shape, (std::vector<std::uint64_t>{2, 1}));
  EXPECT_EQ(npy_features(array, "a.npy"), (std::vector<float>{0.5f, -2.0f}));
}

TEST(Npy, ReadsAFileFromDisk) {
  TempDir dir;
  testing::write_raw(dir / "x.npy", npy_file(header("<f8", "(3,)"), raw<double>({1.0, 0.25, 1e30})));
  const NpyArray array = read_npy(dir / "x.npy");
  EXPECT_EQ(npy_features(array, "x.npy"), (std::vector<float>{1.0f, 0.25f, 1e30f}));
  expect_error([&] { read_npy(dir / "missing.npy"); }, ExitCode::kInputData, {"missing.npy", "cannot open"});
}

TEST(Npy, Uint8FeaturesAreScaledBy255AsTheImageReadersDo) {
  const NpyArray array = parse_npy(npy_file(header("|u1", "(1, 3)"), Bytes{0, 51, 255}), "a.npy");
  EXPECT_EQ(npy_features(array, "a.npy"), (std::vector<float>{0.0f, 51 / 255.0f, 1.0f}));
}

TEST(Npy, Float64FeaturesAreRoundedToFloat32) {
  const double third = 1.0 / 3.0;
  const NpyArray array = parse_npy(npy_file(header("<f8", "(1, 1)"), raw<double>({third})), "a.npy");
  EXPECT_EQ(npy_features(array, "a.npy")[0], static_cast<float>(third));
}

TEST(Npy, RefusesFeaturesThatAreNotFiniteFloat32Values) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_error(
      [&] {
        npy_features(parse_npy(npy_file(header("<f8", "(2, 2)"), raw<double>({0, 0, 0, nan})), "a.npy"), "a.npy");
      },
      ExitCode::kInputData, {"a.npy", "feature 1 of sample 1", "not a finite float32"});
  expect_error(
      [&] { npy_features(parse_npy(npy_file(header("<f8", "(1,)"), raw<double>({1e300})), "a.npy"), "a.npy"); },
      ExitCode::kInputData, {"a.npy", "not a finite float32"});
}

TEST(Npy, RefusesIntegerFeaturesAndScalarFeatures) {
  expect_error(
      [&] { npy_features(parse_npy(npy_file(header("<i8", "(1,)"), raw<std::int64_t>({1})), "a.npy"), "a.npy"); },
      ExitCode::kInputData, {"a.npy", "features of element type '<i8'", "astype('float32')"});
  expect_error([&] { npy_features(parse_npy(npy_file(header("<f4", "()"), raw<float>({1})), "a.npy"), "a.npy"); },
               ExitCode::kInputData, {"a.npy", "hold no samples"});
}

TEST(Npy, LabelsOfEveryIntegerTypeAreRead) {
  EXPECT_EQ(npy_labels(parse_npy(npy_file(header("|u1", "(2,)"), Bytes{9, 0}), "y"), "y"),
            (std::vector<std::int32_t>{9, 0}));
  EXPECT_EQ(npy_labels(parse_npy(npy_file(header("|i1", "(2,)"), Bytes{127, 5}), "y"), "y"),
            (std::vector<std::int32_t>{127, 5}));
  expect_error([] { npy_labels(parse_npy(npy_file(header("|i1", "(1,)"), Bytes{0xFF}), "y"), "y"); },
               ExitCode::kInputData, {"label -1 of sample 0"});
  EXPECT_EQ(npy_labels(parse_npy(npy_file(header("<i4", "(2,)"), raw<std::int32_t>({3, 2})), "y"), "y"),
            (std::vector<std::int32_t>{3, 2}));
  EXPECT_EQ(npy_labels(parse_npy(npy_file(header("<i8", "(1,)"), raw<std::int64_t>({2147483647})), "y"), "y"),
            (std::vector<std::int32_t>{2147483647}));
}

TEST(Npy, RefusesLabelsThatAreNotClassIndices) {
  expect_error(
      [&] {
        npy_labels(parse_npy(npy_file(header("<i8", "(2,)"), raw<std::int64_t>({0, -1})), "y"), "y");
      },
      ExitCode::kInputData, {"label -1 of sample 1"});
  expect_error(
      [&] { npy_labels(parse_npy(npy_file(header("<i8", "(1,)"), raw<std::int64_t>({1ll << 31})), "y"), "y"); },
      ExitCode::kInputData, {"label 2147483648 of sample 0"});
  expect_error([&] { npy_labels(parse_npy(npy_file(header("<f4", "(1,)"), raw<float>({1})), "y"), "y"); },
               ExitCode::kInputData, {"labels of element type '<f4'", "astype('int64')"});
  expect_error([&] { npy_labels(parse_npy(npy_file(header("<i8", "(1, 1)"), raw<std::int64_t>({1})), "y"), "y"); },
               ExitCode::kInputData, {"labels have shape (1, 1)", "reshape(-1)"});
}

TEST(Npy, RefusesTypesOrdersAndLayoutsItCannotRead) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {header(">f4", "(1,)"), {"'>f4' is big-endian", "astype('<f4')"}},
      {header("<c8", "(1,)"), {"element type '<c8' is not supported"}},
      {header("|O", "(1,)"), {"element type '|O' is not supported"}},
      {header("<U5", "(1,)"), {"element type '<U5' is not supported"}},
      {header("<f4", "(1,)", true), {"Fortran order", "np.ascontiguousarray"}},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", {"not a type string"}},
  };
  for (const auto& [text, parts] : cases) {
    std::vector<std::string> expected{"a.npy"};
    expected.insert(expected.end(), parts.begin(), parts.end());
    expect_error([&] { parse_npy(npy_file(text, Bytes(4, 0)), "a.npy"); }, ExitCode::kInputData, expected);
  }
}

TEST(Npy, RefusesDamagedFiles) {
  const Bytes good = npy_file(header("<f4", "(2,)"), raw<float>({1, 2}));
  Bytes bad_magic = good;
  bad_magic[1] = 'X';
  expect_error([&] { parse_npy(bad_magic, "a.npy"); }, ExitCode::kInputData, {"a.npy", "not a .npy file"});
  Bytes bad_version = good;
  bad_version[6] = 4;
  expect_error([&] { parse_npy(bad_version, "a.npy"); }, ExitCode::kInputData, {"format version 4.0"});
  expect_error([&] { parse_npy(Bytes(good.begin(), good.begin() + 40), "a.npy"); }, ExitCode::kInputData,
               {"truncated inside the .npy header"});
  expect_error([&] { parse_npy(Bytes(good.begin(), good.end() - 1), "a.npy"); }, ExitCode::kInputData,
               {"needs 8 bytes of data but only 7 follow", "truncated"});
  Bytes longer = good;
  longer.push_back(0);
  expect_error([&] { parse_npy(longer, "a.npy"); }, ExitCode::kInputData, {"9 follow", "trailing bytes"});
}

TEST(Npy, RefusesMalformedHeaders) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{'descr': '<f4', 'shape': (1,), }", "lacks one of"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unknown key 'extra'"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", "expected ','"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "expected ','"},
      {"{'descr: '<f4'}", "expected ':'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x", "unterminated string"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "expected a dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", "text after the closing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999)}", "implausibly large"},
  };
  for (const auto& [text, part] : cases) {
    expect_error([&] { parse_npy(npy_file(text, Bytes(4, 0)), "a.npy"); }, ExitCode::kInputData, {"a.npy", part});
  }
}

TEST(Npy, EmptyAndScalarShapesCountTheirElements) {
  EXPECT_EQ(parse_npy(npy_file(header("<f4", "()"), raw<float>({1})), "a").element_count(), 1u);
  EXPECT_EQ(parse_npy(npy_file(header("<f4", "(0, 3)"), Bytes{}), "a").element_count(), 0u);
}

}  // namespace
}  // namespace pstrain::data
