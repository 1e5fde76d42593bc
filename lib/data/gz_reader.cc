#include "data/gz_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"

namespace pstrain::data {

namespace {
gzFile handle(void* file) {
  return static_cast<gzFile>(file);
}
}  // namespace

GzReader::GzReader(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": file does not exist"));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": is a folder, expected a file"));
  }
  errno = 0;
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    throw Error(ExitCode::kInputData,
                cat(path.string(), ": cannot open: ", errno != 0 ? std::strerror(errno) : "out of memory"));
  }
  // Bigger than zlib's 8 KiB default: the image files are tens of MB and are read in one pass.
  gzbuffer(handle(file_), 1 << 18);
}

GzReader::~GzReader() {
  // Read-only handle: nothing to flush, so a failing close carries no information we have not checked.
  if (file_ != nullptr) gzclose(handle(file_));
}

void GzReader::check_stream_error() {
  int code = Z_OK;
  const char* message = gzerror(handle(file_), &code);
  if (code == Z_OK) return;
  if (code == Z_BUF_ERROR) {  // zlib's "unexpected end of file": the compressed stream was cut off
    cut_off_ = true;
    return;
  }
  // zlib prefixes its message with the path; drop that, the message names the file already.
  std::string text = message != nullptr ? message : "unknown error";
  const std::string prefix = path_.string() + ": ";
  if (text.starts_with(prefix)) text.erase(0, prefix.size());
  throw Error(ExitCode::kInputData, cat(path_.string(), ": corrupt gzip data: ", text));
}

std::size_t GzReader::read(void* buffer, std::size_t size) {
  auto* out = static_cast<unsigned char*>(buffer);
  std::size_t done = 0;
  while (done < size) {
    // gzread takes an unsigned int length; read in pieces well below that.
    const auto want = static_cast<unsigned>(std::min<std::size_t>(size - done, 1u << 30));
    const int got = gzread(handle(file_), out + done, want);
    if (got <= 0) break;
    done += static_cast<std::size_t>(got);
  }
  // A short read is the end of the data, a cut-off stream, or corrupt data (gzread returned -1).
  if (done < size) check_stream_error();
  return done;
}

std::uint64_t GzReader::skip_to_end() {
  std::vector<unsigned char> scratch(1 << 16);
  std::uint64_t skipped = 0;
  for (;;) {
    const std::size_t got = read(scratch.data(), scratch.size());
    skipped += got;
    if (got < scratch.size()) return skipped;
  }
}

}  // namespace pstrain::data
