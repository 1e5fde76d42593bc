#include <gtest/gtest.h>

#include <H5Cpp.h>

#include <cmath>
#include <limits>

#include "data/shard.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::make_samples;
using testing::TempDir;

// Opens a valid shard for editing, to build the damaged files that write_shard refuses to produce.
template <typename Edit>
void edit_shard(const fs::path& path, Edit edit) {
  H5::Exception::dontPrint();
  H5::H5File file(path.string(), H5F_ACC_RDWR);
  edit(file);
}

void replace_u64_attribute(H5::H5File& file, const char* name, const std::vector<std::uint64_t>& values) {
  file.removeAttr(name);
  const hsize_t size[1] = {values.size()};
  H5::Attribute attribute = file.createAttribute(name, H5::PredType::STD_U64LE, H5::DataSpace(1, size));
  attribute.write(H5::PredType::NATIVE_UINT64, values.data());
}

TEST(Shard, RoundTrip) {
  TempDir dir;
  Samples samples = make_samples(5, 2, 3, 4);
  samples.meta.dataset = "fashion-mnist";
  samples.meta.source = "train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz";
  write_shard(dir / "train-00000.h5", samples);

  const Samples back = read_shard(dir / "train-00000.h5");
  EXPECT_EQ(back.meta.dataset, samples.meta.dataset);
  EXPECT_EQ(back.meta.sample_shape, samples.meta.sample_shape);
  EXPECT_EQ(back.meta.num_classes, samples.meta.num_classes);
  EXPECT_EQ(back.meta.sample_count, samples.meta.sample_count);
  EXPECT_EQ(back.meta.source, samples.meta.source);
  EXPECT_EQ(back.features, samples.features);
  EXPECT_EQ(back.labels, samples.labels);

  const ShardMeta meta = read_shard_meta(dir / "train-00000.h5");
  EXPECT_EQ(meta.dataset, "fashion-mnist");
  EXPECT_EQ(meta.sample_count, 5u);
  EXPECT_EQ(meta.sample_size(), 6u);
}

TEST(Shard, StoresDocumentedLayout) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3, 2, 3, 4));
  H5::H5File file((dir / "s.h5").string(), H5F_ACC_RDONLY);
  std::uint32_t version = 0;
  file.openAttribute("format_version").read(H5::PredType::NATIVE_UINT32, &version);
  EXPECT_EQ(version, 2u);
  for (const char* name : {"dataset", "source"}) {
    EXPECT_FALSE(file.openAttribute(name).getStrType().isVariableStr()) << name << ": fixed-length since version 2";
  }
  H5::DataSet features = file.openDataSet("features");
  EXPECT_EQ(features.getTypeClass(), H5T_FLOAT);
  EXPECT_EQ(features.getDataType().getSize(), 4u);
  hsize_t dims[2] = {0, 0};
  ASSERT_EQ(features.getSpace().getSimpleExtentNdims(), 2);
  features.getSpace().getSimpleExtentDims(dims);
  EXPECT_EQ(dims[0], 3u);
  EXPECT_EQ(dims[1], 6u);
  H5::DataSet labels = file.openDataSet("labels");
  EXPECT_EQ(labels.getTypeClass(), H5T_INTEGER);
  EXPECT_EQ(labels.getIntType().getSign(), H5T_SGN_2);
  for (const char* name : {"dataset", "sample_shape", "num_classes", "sample_count", "source", "format_version"}) {
    EXPECT_TRUE(file.attrExists(name)) << name;
  }
}

TEST(Shard, OverwritesAtomicallyAndLeavesNoTemporaryFiles) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3));
  write_shard(dir / "s.h5", make_samples(7));
  EXPECT_EQ(read_shard_meta(dir / "s.h5").sample_count, 7u);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
}

TEST(Shard, WriteIntoMissingFolderFails) {
  TempDir dir;
  expect_error([&] { write_shard(dir / "no" / "s.h5", make_samples(2)); }, ExitCode::kOutput, {"cannot write", "s.h5"});
  EXPECT_FALSE(fs::exists(dir / "no"));
}

TEST(Shard, MissingFile) {
  TempDir dir;
  expect_error([&] { read_shard(dir / "none.h5"); }, ExitCode::kInputData, {"none.h5", "does not exist"});
}

TEST(Shard, RejectsGarbage) {
  TempDir dir;
  testing::write_raw(dir / "g.h5", testing::Bytes(5000, 0x5A));
  expect_error([&] { read_shard(dir / "g.h5"); }, ExitCode::kInputData, {"g.h5", "not an HDF5 file"});
  expect_error([&] { read_shard_meta(dir / "g.h5"); }, ExitCode::kInputData, {"g.h5", "not an HDF5 file"});
}

TEST(Shard, RejectsTruncatedFile) {
  TempDir dir;
  write_shard(dir / "full.h5", make_samples(2000, 28, 28, 10));
  testing::Bytes bytes = testing::read_raw(dir / "full.h5");
  ASSERT_GT(bytes.size(), 2000u * 28 * 28 * 4);
  bytes.resize(bytes.size() / 2);
  testing::write_raw(dir / "half.h5", bytes);
  expect_error([&] { read_shard(dir / "half.h5"); }, ExitCode::kInputData, {"half.h5", "truncated"});
  expect_error([&] { read_shard_meta(dir / "half.h5"); }, ExitCode::kInputData, {"half.h5", "truncated"});
}

TEST(Shard, RejectsTruncatedSmallFile) {
  TempDir dir;
  write_shard(dir / "full.h5", make_samples(2));
  testing::Bytes bytes = testing::read_raw(dir / "full.h5");
  bytes.resize(bytes.size() / 2);
  testing::write_raw(dir / "half.h5", bytes);
  expect_error([&] { read_shard(dir / "half.h5"); }, ExitCode::kInputData, {"half.h5"});
}

TEST(Shard, RejectsLabelsOutOfRange) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3, 2, 3, 4));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    const std::int32_t labels[3] = {0, 4, 1};
    file.openDataSet("labels").write(labels, H5::PredType::NATIVE_INT32);
  });
  expect_error([&] { read_shard(dir / "s.h5"); }, ExitCode::kInputData,
               {"s.h5", "label 4 of sample 1 is out of range [0, 4)"});
}

TEST(Shard, RejectsNegativeLabel) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3, 2, 3, 4));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    const std::int32_t labels[3] = {-1, 0, 1};
    file.openDataSet("labels").write(labels, H5::PredType::NATIVE_INT32);
  });
  expect_error([&] { read_shard(dir / "s.h5"); }, ExitCode::kInputData, {"s.h5", "label -1 of sample 0"});
}

TEST(Shard, RejectsNonFiniteFeatures) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(2, 1, 2, 4));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    const float features[4] = {0.0f, 0.5f, std::numeric_limits<float>::quiet_NaN(), 1.0f};
    file.openDataSet("features").write(features, H5::PredType::NATIVE_FLOAT);
  });
  expect_error([&] { read_shard(dir / "s.h5"); }, ExitCode::kInputData,
               {"s.h5", "feature 0 of sample 1 is not finite"});
}

TEST(Shard, RejectsShapeThatDisagreesWithFeatures) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3, 2, 3, 4));
  edit_shard(dir / "s.h5", [](H5::H5File& file) { replace_u64_attribute(file, "sample_shape", {2, 2}); });
  expect_error([&] { read_shard_meta(dir / "s.h5"); }, ExitCode::kInputData,
               {"s.h5", "'/features' has shape [3, 6] but the attributes say [3, 4]"});
}

TEST(Shard, RejectsSampleCountThatDisagreesWithDatasets) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3, 2, 3, 4));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    file.removeAttr("sample_count");
    const std::uint64_t count = 4;
    file.createAttribute("sample_count", H5::PredType::STD_U64LE, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_UINT64, &count);
  });
  expect_error([&] { read_shard(dir / "s.h5"); }, ExitCode::kInputData, {"s.h5", "[3, 6]", "[4, 6]"});
}

// Regression (fuzzing, issue 13): a compressed dataset whose extent claims far more samples than the file could
// hold made read_shard allocate sample_count * sample_size floats (here 80 GB) before reading anything.
TEST(Shard, RejectsCompressedDatasetClaimingMoreThanTheFileHolds) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3, 2, 3, 4));
  const std::uint64_t count = std::uint64_t{10} << 30;  // 10 Gi samples of 2 floats
  edit_shard(dir / "s.h5", [&](H5::H5File& file) {
    replace_u64_attribute(file, "sample_shape", {2});
    file.removeAttr("sample_count");
    file.createAttribute("sample_count", H5::PredType::STD_U64LE, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_UINT64, &count);
    for (const char* name : {"features", "labels"}) file.unlink(name);
    H5::DSetCreatPropList compressed;
    const hsize_t chunk[2] = {1024, 2};
    compressed.setChunk(2, chunk);
    compressed.setDeflate(6);
    const hsize_t feature_dims[2] = {count, 2};
    file.createDataSet("features", H5::PredType::IEEE_F32LE, H5::DataSpace(2, feature_dims), compressed);
    H5::DSetCreatPropList compressed_labels;
    compressed_labels.setChunk(1, chunk);
    compressed_labels.setDeflate(6);
    const hsize_t label_dims[1] = {count};
    file.createDataSet("labels", H5::PredType::STD_I32LE, H5::DataSpace(1, label_dims), compressed_labels);
  });
  expect_error([&] { read_shard(dir / "s.h5"); }, ExitCode::kInputData,
               {"s.h5", "'/features' is compressed and claims 85899345920 bytes"});
}

TEST(Shard, RejectsLabelsOfWrongLength) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(3, 2, 3, 4));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    file.unlink("labels");
    const hsize_t dims[1] = {2};
    const std::int32_t labels[2] = {0, 1};
    file.createDataSet("labels", H5::PredType::STD_I32LE, H5::DataSpace(1, dims))
        .write(labels, H5::PredType::NATIVE_INT32);
  });
  expect_error([&] { read_shard(dir / "s.h5"); }, ExitCode::kInputData, {"s.h5", "'/labels' has shape [2]"});
}

TEST(Shard, RejectsWrongFeatureType) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(1, 1, 2, 4));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    file.unlink("features");
    const hsize_t dims[2] = {1, 2};
    const double values[2] = {0.0, 1.0};
    file.createDataSet("features", H5::PredType::IEEE_F64LE, H5::DataSpace(2, dims))
        .write(values, H5::PredType::NATIVE_DOUBLE);
  });
  expect_error([&] { read_shard(dir / "s.h5"); }, ExitCode::kInputData,
               {"s.h5", "'/features' is 64-bit float, expected 32-bit float"});
}

TEST(Shard, RejectsMissingDatasetAndAttribute) {
  TempDir dir;
  write_shard(dir / "a.h5", make_samples(1));
  edit_shard(dir / "a.h5", [](H5::H5File& file) { file.unlink("labels"); });
  expect_error([&] { read_shard(dir / "a.h5"); }, ExitCode::kInputData, {"a.h5", "missing dataset '/labels'"});

  write_shard(dir / "b.h5", make_samples(1));
  edit_shard(dir / "b.h5", [](H5::H5File& file) { file.removeAttr("num_classes"); });
  expect_error([&] { read_shard_meta(dir / "b.h5"); }, ExitCode::kInputData,
               {"b.h5", "missing attribute 'num_classes'"});
}

TEST(Shard, RejectsOtherFormatVersion) {
  TempDir dir;
  for (const std::uint32_t version : {0u, 3u}) {
    write_shard(dir / "s.h5", make_samples(1));
    edit_shard(dir / "s.h5", [&](H5::H5File& file) {
      file.openAttribute("format_version").write(H5::PredType::NATIVE_UINT32, &version);
    });
    expect_error([&] { read_shard_meta(dir / "s.h5"); }, ExitCode::kInputData,
                 {"s.h5", cat("unsupported format_version ", version)});
  }
}

// Rewrites the string attribute `name` as a variable-length string (how version 1 stored every string).
void make_variable_length(H5::H5File& file, const char* name, const std::string& value) {
  file.removeAttr(name);
  const H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
  file.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value);
}

TEST(Shard, ReadsVersionOneShardsWithVariableLengthStrings) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(2));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    const std::uint32_t version = 1;
    file.openAttribute("format_version").write(H5::PredType::NATIVE_UINT32, &version);
    make_variable_length(file, "dataset", "an older shard");
  });
  const ShardMeta meta = read_shard_meta(dir / "s.h5");
  EXPECT_EQ(meta.format_version, 1u);
  EXPECT_EQ(meta.dataset, "an older shard");
}

TEST(Shard, RefusesAVariableLengthStringInAVersionTwoShardWithoutAManifestBeforeReadingIt) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(1));
  edit_shard(dir / "s.h5", [](H5::H5File& file) { make_variable_length(file, "source", "x"); });
  expect_error([&] { read_shard_meta(dir / "s.h5"); }, ExitCode::kInputData,
               {"s.h5", "attribute 'source' is a variable-length string", "folder with a MANIFEST",
                cat("pstrain-data manifest --output ", dir.path().string())});
}

// h5py's defaults: a Python str becomes a variable-length UTF-8 string, a Python int or tuple of ints int64.
void write_as_h5py_does(H5::H5File& file, const Samples& samples) {
  for (const char* name : {"dataset", "source"}) make_variable_length(file, name, cat("h5py ", name));
  const auto replace_i64 = [&](const char* name, const std::vector<std::int64_t>& values, bool scalar) {
    file.removeAttr(name);
    const hsize_t size[1] = {values.size()};
    const H5::DataSpace space = scalar ? H5::DataSpace(H5S_SCALAR) : H5::DataSpace(1, size);
    file.createAttribute(name, H5::PredType::STD_I64LE, space).write(H5::PredType::NATIVE_INT64, values.data());
  };
  std::vector<std::int64_t> shape(samples.meta.sample_shape.begin(), samples.meta.sample_shape.end());
  replace_i64("sample_shape", shape, false);
  replace_i64("num_classes", {samples.meta.num_classes}, true);
  replace_i64("sample_count", {static_cast<std::int64_t>(samples.meta.sample_count)}, true);
  replace_i64("format_version", {2}, true);
}

TEST(Shard, ReadsH5pyDefaultsInAFolderWithAManifest) {
  TempDir dir;
  const Samples samples = make_samples(5);
  write_shard(dir / train_shard_file_name(0), samples);
  write_shard(dir / kTestShardFileName, samples);
  for (const char* name : {"train-00000.h5", kTestShardFileName}) {
    edit_shard(dir / name, [&](H5::H5File& file) { write_as_h5py_does(file, samples); });
  }
  write_data_manifest(dir.path());
  const Samples read = read_shard(dir / kTestShardFileName);
  EXPECT_EQ(read.meta.dataset, "h5py dataset");
  EXPECT_EQ(read.meta.source, "h5py source");
  EXPECT_EQ(read.meta.sample_shape, samples.meta.sample_shape);
  EXPECT_EQ(read.meta.num_classes, samples.meta.num_classes);
  EXPECT_EQ(read.meta.sample_count, samples.meta.sample_count);
  EXPECT_EQ(read.features, samples.features);
  EXPECT_EQ(read.labels, samples.labels);
}

TEST(Shard, SignedAttributesAreCheckedForTheirRange) {
  TempDir dir;
  const std::vector<std::tuple<const char*, std::int64_t, std::string>> cases{
      {"num_classes", -1, "attribute 'num_classes' holds -1, expected 0 to 4294967295"},
      {"num_classes", std::int64_t{1} << 32, "attribute 'num_classes' holds 4294967296"},
      {"format_version", -2, "attribute 'format_version' holds -2"},
      {"sample_count", -5, "attribute 'sample_count' holds -5"},
  };
  for (const auto& [name, value, message] : cases) {
    write_shard(dir / "s.h5", make_samples(1));
    edit_shard(dir / "s.h5", [&](H5::H5File& file) {
      file.removeAttr(name);
      file.createAttribute(name, H5::PredType::STD_I64LE, H5::DataSpace(H5S_SCALAR))
          .write(H5::PredType::NATIVE_INT64, &value);
    });
    expect_error([&] { read_shard_meta(dir / "s.h5"); }, ExitCode::kInputData, {"s.h5", message});
  }
  write_shard(dir / "s.h5", make_samples(1));
  edit_shard(dir / "s.h5", [&](H5::H5File& file) {
    file.removeAttr("sample_shape");
    const std::int64_t shape[2] = {2, -3};
    const hsize_t size[1] = {2};
    file.createAttribute("sample_shape", H5::PredType::STD_I64LE, H5::DataSpace(1, size))
        .write(H5::PredType::NATIVE_INT64, shape);
  });
  expect_error([&] { read_shard_meta(dir / "s.h5"); }, ExitCode::kInputData, {"attribute 'sample_shape' holds -3"});
}

TEST(Shard, RejectsAttributeOfWrongType) {
  TempDir dir;
  write_shard(dir / "s.h5", make_samples(1));
  edit_shard(dir / "s.h5", [](H5::H5File& file) {
    file.removeAttr("num_classes");
    const float classes = 4.0f;
    file.createAttribute("num_classes", H5::PredType::IEEE_F32LE, H5::DataSpace(H5S_SCALAR))
        .write(H5::PredType::NATIVE_FLOAT, &classes);
  });
  expect_error([&] { read_shard_meta(dir / "s.h5"); }, ExitCode::kInputData,
               {"s.h5", "'num_classes' is 32-bit float, expected a whole number"});
}

}  // namespace
}  // namespace pstrain::data
