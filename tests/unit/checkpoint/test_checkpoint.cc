// Checkpoint files: round trip, manifest verification, discovery and cleanup.
#include "checkpoint/checkpoint.h"

#include <H5Cpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/manifest.h"
#include "core/error.h"

namespace pstrain::checkpoint {
namespace {

namespace fs = std::filesystem;

std::vector<nn::ParameterInfo> layout() {
  return {{"fc1.weight", {3, 2}, 0, 6}, {"fc1.bias", {3}, 6, 3}};
}

Checkpoint sample_checkpoint(std::int64_t global_step) {
  Checkpoint checkpoint;
  checkpoint.model.parameters = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  checkpoint.model.optimizer = "momentum";
  checkpoint.model.optimizer_steps = 42;
  checkpoint.model.optimizer_state = {{"velocity", {9, 8, 7, 6, 5, 4, 3, 2, 1}}};
  checkpoint.training.pass = 1;
  checkpoint.training.step_in_pass = 3;
  checkpoint.training.global_step = global_step;
  checkpoint.training.seed = 7;
  checkpoint.training.consumed = {{1, 0, 1}, {0, 0}};
  return checkpoint;
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    output_ = fs::temp_directory_path() / ("pstrain-checkpoint-" + std::to_string(::getpid()));
    fs::remove_all(output_);
    fs::create_directories(output_);
  }
  void TearDown() override { fs::remove_all(output_); }

  fs::path write(std::int64_t step, int keep = 0) {
    return write_checkpoint(output_, sample_checkpoint(step), layout(), "lr = 0.1\n", {keep, {}});
  }
  Checkpoint read(const fs::path& folder, const std::string& optimizer = "momentum",
                  std::vector<std::uint64_t> shards = {3, 2}) {
    return read_checkpoint(folder, layout(), 9, optimizer, shards);
  }
  static void expect_rejected(const std::function<void()>& action, const std::string& fragment) {
    try {
      action();
      FAIL() << "accepted; expected an error mentioning " << fragment;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kInputData);
      EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    }
  }

  fs::path output_;
};

TEST_F(CheckpointTest, RoundTripKeepsEveryBit) {
  const fs::path folder = write(12);
  EXPECT_EQ(folder.filename(), "ckpt-0000000012");
  const Checkpoint loaded = read(folder);
  const Checkpoint expected = sample_checkpoint(12);
  EXPECT_EQ(loaded.model.parameters, expected.model.parameters);
  EXPECT_EQ(loaded.model.optimizer_steps, 42u);
  ASSERT_EQ(loaded.model.optimizer_state.size(), 1u);
  EXPECT_EQ(loaded.model.optimizer_state[0].first, "velocity");
  EXPECT_EQ(loaded.model.optimizer_state[0].second, expected.model.optimizer_state[0].second);
  EXPECT_EQ(loaded.training.pass, 1);
  EXPECT_EQ(loaded.training.step_in_pass, 3);
  EXPECT_EQ(loaded.training.global_step, 12);
  EXPECT_EQ(loaded.training.consumed, expected.training.consumed);
}

TEST_F(CheckpointTest, FlippedBitIsRejectedByChecksum) {
  const fs::path folder = write(5);
  std::fstream file(folder / "model.h5", std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(1000);
  char byte = 0;
  file.read(&byte, 1);
  byte ^= 0x01;
  file.seekp(1000);
  file.write(&byte, 1);
  file.close();
  expect_rejected([&] { read(folder); }, "checksum");
}

TEST_F(CheckpointTest, TruncatedFileMissingManifestAndOtherVersionAreRejected) {
  const fs::path truncated = write(1);
  fs::resize_file(truncated / "training.h5", 100);
  expect_rejected([&] { read(truncated); }, "has 100 bytes");
  const fs::path unfinished = write(2);
  fs::remove(unfinished / kManifestName);
  expect_rejected([&] { read(unfinished); }, "no MANIFEST");
  const fs::path future = write(3);
  std::ofstream(future / kManifestName) << "pstrain-checkpoint 99\nend\n";
  expect_rejected([&] { read(future); }, "format version 99");
}

TEST_F(CheckpointTest, AnotherOptimizerOrOtherDataAreRejected) {
  const fs::path folder = write(4);
  expect_rejected([&] { read(folder, "adam"); }, "--optimizer momentum");
  expect_rejected([&] { read(folder, "momentum", {3}); }, "training shards");
  expect_rejected([&] { read(folder, "momentum", {3, 5}); }, "samples");
}

// Regression (fuzzing, issue 13): an attribute holding an array where one value belongs was read into a single
// variable, and HDF5 wrote every element of the array past it (a stack buffer overflow under ASan).
TEST_F(CheckpointTest, ArrayOrMistypedAttributeIsRejected) {
  const auto rewrite = [](const fs::path& folder, const char* file_name, auto edit) {
    {
      H5::Exception::dontPrint();
      H5::H5File file((folder / file_name).string(), H5F_ACC_RDWR);
      edit(file);
    }
    write_manifest(folder, {"model.h5", "training.h5", "config.ini"});  // a consistent, valid-looking checkpoint
  };
  const fs::path steps = write(6);
  rewrite(steps, "model.h5", [](H5::H5File& file) {
    file.removeAttr("optimizer_steps");
    const hsize_t count[1] = {64};
    const std::vector<std::uint64_t> values(64, 7);
    file.createAttribute("optimizer_steps", H5::PredType::STD_U64LE, H5::DataSpace(1, count))
        .write(H5::PredType::NATIVE_UINT64, values.data());
  });
  expect_rejected([&] { read(steps); }, "attribute 'optimizer_steps' must be a single integer");

  const fs::path seed = write(7);
  rewrite(seed, "training.h5", [](H5::H5File& file) {
    file.removeAttr("seed");
    const H5::StrType type(H5::PredType::C_S1, 4);
    file.createAttribute("seed", type, H5::DataSpace(H5S_SCALAR)).write(type, std::string("1234"));
  });
  expect_rejected([&] { read(seed); }, "attribute 'seed' must be a single integer");

  // A variable-length string (pstrain writes fixed-length ones) is refused before HDF5 reads its global heap,
  // whose parser looped for ever on a damaged file found by fuzzing.
  const fs::path variable = write(9);
  rewrite(variable, "model.h5", [](H5::H5File& file) {
    file.removeAttr("optimizer");
    const H5::StrType type(H5::PredType::C_S1, H5T_VARIABLE);
    file.createAttribute("optimizer", type, H5::DataSpace(H5S_SCALAR)).write(type, std::string("momentum"));
  });
  expect_rejected([&] { read(variable); }, "attribute 'optimizer' is a variable-length string");

  const fs::path missing = write(8);
  rewrite(missing, "model.h5", [](H5::H5File& file) { file.removeAttr("optimizer"); });
  expect_rejected([&] { read(missing); }, "missing attribute 'optimizer'");
}

// Regression (fuzzing, h-harden2): HDF5 sizes its type-conversion buffer by the element size the file claims; a
// parameters.h5 whose float type claimed 1.9 GB per element made it allocate that much. Element sizes are checked
// before any read, for the tensors and for the consumed flags.
TEST_F(CheckpointTest, ElementTypeOfAnotherSizeIsRefusedBeforeReading) {
  const auto replace_dataset = [](const fs::path& folder, const char* file_name, const char* dataset,
                                  const H5::DataType& type, hsize_t count) {
    {
      H5::Exception::dontPrint();
      H5::H5File file((folder / file_name).string(), H5F_ACC_RDWR);
      file.unlink(dataset);
      const std::vector<char> zeros(count * type.getSize(), 0);
      file.createDataSet(dataset, type, H5::DataSpace(1, &count)).write(zeros.data(), type);
    }
    write_manifest(folder, {"model.h5", "training.h5", "config.ini"});
  };
  const fs::path wide_float = write(10);
  replace_dataset(wide_float, "model.h5", "parameters/fc1.bias", H5::PredType::NATIVE_LDOUBLE, 3);
  expect_rejected([&] { read(wide_float); }, "'fc1.bias' holds floats of 16 bytes");

  const fs::path doubles = write(11);  // 64-bit floats are still read (converted)
  replace_dataset(doubles, "model.h5", "parameters/fc1.bias", H5::PredType::NATIVE_DOUBLE, 3);
  EXPECT_EQ(read(doubles).model.parameters[6], 0.0f);

  const fs::path wide_flags = write(12);
  replace_dataset(wide_flags, "training.h5", "consumed/train-00000", H5::PredType::NATIVE_UINT32, 3);
  expect_rejected([&] { read(wide_flags); }, "consumed/train-00000 is not a dataset of bytes");
}

// Regression (fuzzing, 2026-11-23): HDF5 1.10.8 follows a dataset's layout message wherever it points; damaged ones
// made H5Dread copy from a null buffer (fuzz_pass_folder, 3 crashes in 10 minutes; inputs in tests/fuzz/regressions).
// pstrain writes every dataset contiguous and whole, so another layout or size is refused before any read.
TEST_F(CheckpointTest, DatasetsNotStoredAsPstrainWritesThemAreRefusedBeforeReading) {
  const auto replace_bias = [](const fs::path& folder, H5D_layout_t layout) {
    {
      H5::Exception::dontPrint();
      H5::H5File file((folder / "model.h5").string(), H5F_ACC_RDWR);
      file.unlink("parameters/fc1.bias");
      const hsize_t count = 3;
      H5::DSetCreatPropList properties;
      if (layout == H5D_CHUNKED) properties.setChunk(1, &count);
      if (layout == H5D_COMPACT) properties.setLayout(H5D_COMPACT);
      const float values[3] = {1, 2, 3};
      file.createDataSet("parameters/fc1.bias", H5::PredType::NATIVE_FLOAT, H5::DataSpace(1, &count), properties)
          .write(values, H5::PredType::NATIVE_FLOAT);
    }
    write_manifest(folder, {"model.h5", "training.h5", "config.ini"});
  };
  const fs::path chunked = write(10);
  replace_bias(chunked, H5D_CHUNKED);
  expect_rejected([&] { read(chunked); }, "'fc1.bias' is not stored contiguously");
  const fs::path compact = write(11);
  replace_bias(compact, H5D_COMPACT);
  expect_rejected([&] { read(compact); }, "'fc1.bias' is not stored contiguously");
  const fs::path contiguous = write(12);  // the layout pstrain writes is read, whatever wrote it
  replace_bias(contiguous, H5D_CONTIGUOUS);
  EXPECT_EQ(read(contiguous).model.parameters[8], 3.0f);
}

TEST_F(CheckpointTest, ListsNewestFirstAndKeepsTheNewestN) {
  write(10);
  write(30);
  write(20, 2);
  const auto found = list_checkpoints(output_);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].filename(), "ckpt-0000000030");
  EXPECT_EQ(found[1].filename(), "ckpt-0000000020");
}

TEST_F(CheckpointTest, StaleTemporariesAreRemovedAndNeverListed) {
  write(1);
  fs::create_directories(checkpoints_folder(output_) / ".ckpt-tmp-ckpt-0000000002-123");
  EXPECT_EQ(list_checkpoints(output_).size(), 1u);
  const auto removed = remove_stale_temporaries(output_);
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_FALSE(fs::exists(checkpoints_folder(output_) / removed[0]));
}

}  // namespace
}  // namespace pstrain::checkpoint
