#pragma once
// A text file (plain or gzip'd: zlib reads both) as blocks of whole lines, for parsers that take many lines at a
// time on several threads. Memory: one block and the part line carried into the next.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "data/gz_reader.h"

namespace pstrain::data::ctr {

class LineBlocks {
 public:
  // Throws Error(kInputData) naming the file when it is missing or cannot be opened.
  LineBlocks(const std::filesystem::path& path, std::size_t block_bytes);

  // The next lines (at least one whole line unless at the end; the last line need not end with '\n') into
  // `block`; false at the end of the file. Counts them into lines(). Throws Error(kInputData) for corrupt gzip
  // data and for a .gz cut off inside its compressed stream (a truncated download), naming the file and the last
  // whole line read.
  bool next(std::string& block);
  std::uint64_t lines() const { return lines_; }

 private:
  std::filesystem::path path_;
  GzReader reader_;
  std::size_t block_bytes_;
  std::string carry_;  // the start of a line continued in the next read
  std::uint64_t lines_ = 0;
  bool ended_ = false;
};

// The number of lines of a file (a last line without '\n' counts), read through LineBlocks.
std::uint64_t count_lines(const std::filesystem::path& path);

}  // namespace pstrain::data::ctr
