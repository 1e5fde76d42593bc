// The .npz reader on archives built here with libzip as numpy.savez (stored) and numpy.savez_compressed (deflated)
// lay them out: one NAME.npy member per array.
#include <gtest/gtest.h>

#include <zip.h>

#include <algorithm>

#include "data/npz.h"
#include "test_files.h"

namespace pstrain::data {
namespace {

using testing::Bytes;
using testing::expect_error;
using testing::TempDir;

Bytes npy_of_floats(const std::vector<float>& values) {
  std::string header = cat("{'descr': '<f4', 'fortran_order': False, 'shape': (", values.size(), ",), }");
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string text = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  text.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return Bytes(text.begin(), text.end());
}

// Writes an archive of `members` (name, bytes), each stored or deflated.
void write_zip(const std::filesystem::path& path, const std::vector<std::pair<std::string, Bytes>>& members,
               bool deflate) {
  int code = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  ASSERT_NE(archive, nullptr);
  for (const auto& [name, bytes] : members) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_OVERWRITE);
    ASSERT_GE(index, 0);
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(archive), 0);  // writes the archive; the buffers above must live until here
}

TEST(Npz, ReadsStoredAndDeflatedMembersByKey) {
  TempDir dir;
  const Bytes x = npy_of_floats({1.5f, -2.0f, 3.0f}), y = npy_of_floats({7.0f});
  for (const bool deflate : {false, true}) {
    write_zip(dir / "a.npz", {{"x.npy", x}, {"y.npy", y}, {"notes.txt", Bytes{'h', 'i'}}}, deflate);
    const NpzArchive archive(dir / "a.npz");
    EXPECT_EQ(archive.keys(), (std::vector<std::string>{"x", "y"})) << "members that are not .npy are no arrays";
    EXPECT_TRUE(archive.contains("x"));
    EXPECT_FALSE(archive.contains("notes"));
    const NpyArray array = archive.read("x");
    EXPECT_EQ(npy_features(array, "x"), (std::vector<float>{1.5f, -2.0f, 3.0f}));
    EXPECT_EQ(array.shape, std::vector<std::uint64_t>{3});
  }
}

TEST(Npz, AMissingArrayIsRefusedListingTheArchivesArrays) {
  TempDir dir;
  write_zip(dir / "a.npz", {{"x_train.npy", npy_of_floats({1})}, {"y_train.npy", npy_of_floats({1})}}, false);
  const NpzArchive archive(dir / "a.npz");
  expect_error([&] { archive.read("x"); }, ExitCode::kInputData, {"a.npz holds no array 'x'", "x_train, y_train"});
}

TEST(Npz, MessagesAboutAMemberNameTheArchiveAndTheKey) {
  TempDir dir;
  write_zip(dir / "a.npz", {{"x.npy", Bytes{'n', 'o', 't', ' ', 'n', 'p', 'y', '!'}}}, true);
  expect_error([&] { NpzArchive(dir / "a.npz").read("x"); }, ExitCode::kInputData, {"a.npz:x", "not a .npy file"});
}

TEST(Npz, RefusesFilesThatAreNotZipArchives) {
  TempDir dir;
  testing::write_raw(dir / "a.npz", npy_of_floats({1, 2}));
  expect_error([&] { NpzArchive archive(dir / "a.npz"); }, ExitCode::kInputData, {"a.npz", "not a .npz archive"});
  expect_error([&] { NpzArchive archive(dir / "missing.npz"); }, ExitCode::kInputData, {"missing.npz", "no such file"});
}

TEST(Npz, AFlippedBitInAStoredMemberFailsItsChecksum) {
  TempDir dir;
  const std::vector<float> values(64, 0.25f);
  const Bytes x = npy_of_floats(values);
  write_zip(dir / "a.npz", {{"x.npy", x}}, false);
  Bytes archive_bytes = testing::read_raw(dir / "a.npz");
  // The member is stored, so its data sits in the archive as is: flip a bit in its last float.
  const auto at = std::search(archive_bytes.begin(), archive_bytes.end(), x.begin(), x.end());
  ASSERT_NE(at, archive_bytes.end());
  *(at + static_cast<std::ptrdiff_t>(x.size()) - 1) ^= 0x01;
  testing::write_raw(dir / "a.npz", archive_bytes);
  expect_error([&] { NpzArchive(dir / "a.npz").read("x"); }, ExitCode::kInputData,
               {"a.npz:x", "damaged archive member"});
}

}  // namespace
}  // namespace pstrain::data
