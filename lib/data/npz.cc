#include "data/npz.h"

#include <zip.h>

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace pstrain::data {

namespace {

constexpr const char* kMemberSuffix = ".npy";

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

// Closes a member opened by zip_fopen_index on every path.
struct MemberCloser {
  void operator()(zip_file_t* member) const { zip_fclose(member); }
};

}  // namespace

NpzArchive::NpzArchive(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path_, ec)) {
    const bool exists = std::filesystem::exists(path_, ec);
    throw Error(ExitCode::kInputData,
                cat(path_.string(), exists ? ": not a file" : ": no such file", " (numpy.savez writes one .npz file)"));
  }
  int code = 0;
  archive_ = zip_open(path_.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  if (archive_ == nullptr) {
    throw Error(ExitCode::kInputData,
                cat(path_.string(), ": not a .npz archive (numpy.savez writes a zip file): ", zip_error_text(code)));
  }
  const zip_int64_t count = zip_get_num_entries(archive_, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* member = zip_get_name(archive_, static_cast<zip_uint64_t>(i), 0);
    const std::string name = member ? member : "";
    const std::size_t suffix = std::char_traits<char>::length(kMemberSuffix);
    if (name.size() > suffix && name.compare(name.size() - suffix, suffix, kMemberSuffix) == 0) {
      keys_.push_back(name.substr(0, name.size() - suffix));
    }
  }
}

NpzArchive::~NpzArchive() {
  if (archive_ != nullptr) zip_discard(archive_);  // read-only: nothing to write back
}

bool NpzArchive::contains(const std::string& key) const {
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

NpyArray NpzArchive::read(const std::string& key) const {
  const std::string name = cat(path_.string(), ":", key);
  if (!contains(key)) {
    std::string known;
    for (const std::string& k : keys_) known += cat(known.empty() ? "" : ", ", k);
    throw Error(ExitCode::kInputData,
                cat(path_.string(), " holds no array '", key, "' (it holds: ", known.empty() ? "none" : known, ")"));
  }
  const std::string member = key + kMemberSuffix;
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat(archive_, member.c_str(), 0, &stat) != 0 || !(stat.valid & ZIP_STAT_SIZE)) {
    throw Error(ExitCode::kInputData, cat(name, ": cannot read the archive member: ", zip_strerror(archive_)));
  }
  const std::unique_ptr<zip_file_t, MemberCloser> file(zip_fopen(archive_, member.c_str(), 0));
  if (!file) throw Error(ExitCode::kInputData, cat(name, ": cannot open the archive member: ", zip_strerror(archive_)));
  // Read to the end, not just stat.size bytes: libzip checks the member's CRC-32 once it reaches the end. The buffer
  // grows with what arrives, so a damaged size field costs no more memory than the data really there.
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[1 << 16];
  for (;;) {
    const zip_int64_t got = zip_fread(file.get(), chunk, sizeof chunk);
    if (got < 0) {
      throw Error(ExitCode::kInputData, cat(name, ": damaged archive member: ", zip_file_strerror(file.get())));
    }
    if (got == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  if (bytes.size() != stat.size) {
    throw Error(ExitCode::kInputData, cat(name, ": the archive lists ", stat.size, " bytes but the member holds ",
                                          bytes.size(), " (damaged archive)"));
  }
  return parse_npy(std::move(bytes), name);
}

}  // namespace pstrain::data
