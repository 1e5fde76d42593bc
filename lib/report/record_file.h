#pragma once
// TFRecord files, the framing of TensorBoard event files. Each record is
//   uint64 length | uint32 masked_crc32c(length) | length bytes of data | uint32 masked_crc32c(data)
// with the integers little-endian.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pstrain::report {

// Appends records to a new file. Write failures throw pstrain::Error(kOutput) naming the file; the
// destructor closes the file and never throws.
class RecordWriter {
 public:
  // Creates `path`; fails if it exists already (two writers must never share a file).
  explicit RecordWriter(const std::filesystem::path& path);

  void write(std::string_view data);
  // Hands what was written to the operating system, so that a reader (TensorBoard) sees it while we run.
  void flush();
  const std::filesystem::path& path() const { return path_; }

 private:
  struct Close {
    void operator()(std::FILE* file) const noexcept { std::fclose(file); }
  };
  std::filesystem::path path_;
  std::unique_ptr<std::FILE, Close> file_;
};

// Every record of a file, each CRC checked. Throws pstrain::Error(kInputData) naming the file, the record and
// what is wrong (truncated, a length or data CRC that does not match).
std::vector<std::string> read_records(const std::filesystem::path& path);

}  // namespace pstrain::report
