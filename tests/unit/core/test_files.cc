#include "core/files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("pstrain-files-" + std::to_string(::getpid()));
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  fs::path folder_;
};

TEST_F(FilesTest, AtomicWriteReplacesAndLeavesNoTemporary) {
  write_file_atomically(folder_ / "a.txt", "first");
  write_file_atomically(folder_ / "a.txt", "second");
  EXPECT_EQ(read(folder_ / "a.txt"), "second");
  EXPECT_EQ(std::distance(fs::directory_iterator(folder_), fs::directory_iterator()), 1);
}

TEST_F(FilesTest, AppendLineAppends) {
  append_line_durably(folder_ / "m.jsonl", "{\"a\": 1}");
  append_line_durably(folder_ / "m.jsonl", "{\"a\": 2}");
  EXPECT_EQ(read(folder_ / "m.jsonl"), "{\"a\": 1}\n{\"a\": 2}\n");
}

TEST_F(FilesTest, UnwritableFolderIsAnOutputError) {
  if (::geteuid() == 0) {
    // root ignores permissions: use a path below a regular file instead.
    std::ofstream(folder_ / "file") << "x";
    EXPECT_THROW(ensure_writable_folder(folder_ / "file" / "sub"), Error);
    return;
  }
  fs::create_directories(folder_ / "ro");
  fs::permissions(folder_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(ensure_writable_folder(folder_ / "ro"), Error);
}

}  // namespace
}  // namespace pstrain
