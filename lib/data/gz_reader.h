#pragma once
// Sequential reader for gzip-compressed files. zlib's gzread reads uncompressed files transparently too,
// so the same code accepts "train-images-idx3-ubyte.gz" and an already unpacked "train-images-idx3-ubyte".
#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace pstrain::data {

class GzReader {
 public:
  // Throws Error(kInputData) naming the file when it is missing or cannot be opened.
  explicit GzReader(const std::filesystem::path& path);
  ~GzReader();
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to `size` decompressed bytes; returns fewer only at the end of the data. Throws Error(kInputData)
  // for corrupt compressed data. A gzip stream that stops early (a cut-off download) also ends the data,
  // and sets cut_off(): the caller can say what was missing better than zlib's "unexpected end of file".
  std::size_t read(void* buffer, std::size_t size);

  // True once the data ended inside a gzip stream rather than at its end marker.
  bool cut_off() const { return cut_off_; }

  // Counts (and discards) the bytes left before the end of the data.
  std::uint64_t skip_to_end();

 private:
  void check_stream_error();

  std::filesystem::path path_;
  void* file_ = nullptr;  // gzFile; kept opaque so that users of this header need not include zlib.h
  bool cut_off_ = false;
};

}  // namespace pstrain::data
