#include "report/record_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "report/crc32c.h"

namespace pstrain::report {

namespace {

void put_le(unsigned char* out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(value >> (8 * i));
}

std::uint64_t get_le(const char* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return value;
}

}  // namespace

RecordWriter::RecordWriter(const std::filesystem::path& path) : path_(path), file_(std::fopen(path.c_str(), "wbx")) {
  if (!file_) throw Error(ExitCode::kOutput, cat("cannot create ", path.string(), ": ", std::strerror(errno)));
}

void RecordWriter::write(std::string_view data) {
  unsigned char header[12];
  put_le(header, data.size(), 8);
  put_le(header + 8, mask_crc(crc32c(header, 8)), 4);
  unsigned char footer[4];
  put_le(footer, mask_crc(crc32c(data)), 4);
  if (std::fwrite(header, 1, sizeof header, file_.get()) != sizeof header ||
      std::fwrite(data.data(), 1, data.size(), file_.get()) != data.size() ||
      std::fwrite(footer, 1, sizeof footer, file_.get()) != sizeof footer) {
    throw Error(ExitCode::kOutput, cat("cannot write to ", path_.string(), ": ", std::strerror(errno)));
  }
}

void RecordWriter::flush() {
  if (std::fflush(file_.get()) != 0) {
    throw Error(ExitCode::kOutput, cat("cannot write to ", path_.string(), ": ", std::strerror(errno)));
  }
}

std::vector<std::string> read_records(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::kInputData, cat("cannot open ", path.string()));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> records;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const auto where = [&] { return cat(path.string(), ": record ", records.size(), " at byte ", at, ": "); };
    if (bytes.size() - at < 12) throw Error(ExitCode::kInputData, where() + "truncated header");
    const std::uint64_t length = get_le(bytes.data() + at, 8);
    if (mask_crc(crc32c(bytes.data() + at, 8)) != get_le(bytes.data() + at + 8, 4)) {
      throw Error(ExitCode::kInputData, where() + "length CRC does not match");
    }
    if (bytes.size() - at - 12 < length || bytes.size() - at - 12 - length < 4) {
      throw Error(ExitCode::kInputData, cat(where(), "truncated data (", length, " bytes announced)"));
    }
    const std::string_view data(bytes.data() + at + 12, length);
    if (mask_crc(crc32c(data)) != get_le(bytes.data() + at + 12 + length, 4)) {
      throw Error(ExitCode::kInputData, where() + "data CRC does not match");
    }
    records.emplace_back(data);
    at += 12 + length + 4;
  }
  return records;
}

}  // namespace pstrain::report
