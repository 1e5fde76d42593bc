// Pass folders (--init-from): the MANIFEST written before `done`, and the reader's checks against it.
#include "checkpoint/pass_folder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "core/error.h"

namespace pstrain::checkpoint {
namespace {

namespace fs = std::filesystem;

std::vector<nn::ParameterInfo> layout() {
  return {{"fc1.weight", {3, 2}, 0, 6}, {"fc1.bias", {3}, 6, 3}};
}
const std::vector<float> kParameters = {1, 2, 3, 4, 5, 6, 7, 8, 9};

class PassFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    output_ = fs::temp_directory_path() / ("pstrain-pass-folder-" + std::to_string(::getpid()));
    fs::remove_all(output_);
    fs::create_directories(output_);
  }
  void TearDown() override { fs::remove_all(output_); }

  fs::path write_pass(int pass, const std::vector<fs::path>& beside = {}) {
    write_pass_folder(output_, pass, layout(), kParameters, false, {}, beside);
    return output_ / pass_folder_name(pass);
  }
  static void flip_byte(const fs::path& path, std::streamoff at) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(at);
    const char byte = static_cast<char>(file.get() ^ 0x10);
    file.seekp(at);
    file.put(byte);
  }
  static void expect_rejected(const std::function<void()>& action, const std::vector<std::string>& parts) {
    try {
      action();
      FAIL() << "accepted; expected an error mentioning " << parts.front();
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kInputData);
      for (const std::string& part : parts)
        EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
    }
  }

  fs::path output_;
};

TEST_F(PassFolderTest, ManifestListsParametersAndTheFilesBeside) {
  std::ofstream(output_ / "vocab.txt") << "<unk>\nthe\n";
  const fs::path folder = write_pass(0, {output_ / "vocab.txt"});
  std::vector<std::string> names;
  for (const ManifestEntry& entry : read_manifest(folder, kPassManifest)) {
    names.push_back(entry.name);
    EXPECT_EQ(entry.crc32, file_crc32(folder / entry.name));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"parameters.h5", "vocab.txt"}));
  EXPECT_EQ(read_pass_parameters(folder, layout(), kParameters.size()), kParameters);
}

TEST_F(PassFolderTest, FlippedBitIsRefusedAsCorruptBeforeHdf5ReadsIt) {
  const fs::path folder = write_pass(0);
  flip_byte(folder / kParametersFile, 0);  // HDF5's signature: HDF5 alone would say something else
  expect_rejected([&] { read_pass_parameters(folder, layout(), kParameters.size()); },
                  {"parameters.h5: checksum", "the file is corrupt"});
}

TEST_F(PassFolderTest, TruncatedParametersAreNamedTruncated) {
  const fs::path folder = write_pass(1);
  fs::resize_file(folder / kParametersFile, 100);
  expect_rejected([&] { read_pass_parameters(folder, layout(), kParameters.size()); },
                  {"parameters.h5 has 100 bytes, the manifest says", "truncated"});
}

TEST_F(PassFolderTest, FolderWithoutManifestIsReadOnItsDoneFile) {
  const fs::path folder = write_pass(2);
  fs::remove(folder / kManifestName);  // as written before pass folders carried one
  EXPECT_EQ(read_pass_parameters(folder, layout(), kParameters.size()), kParameters);
  fs::remove(folder / "done");
  expect_rejected([&] { read_pass_parameters(folder, layout(), kParameters.size()); }, {"incomplete (no done file)"});
}

}  // namespace
}  // namespace pstrain::checkpoint
