#include "core/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.h"

namespace pstrain {

namespace {

// RAII for a POSIX file descriptor.
class FileDescriptor {
 public:
  FileDescriptor(const std::filesystem::path& path, int flags, mode_t mode = 0644)
      : fd_(::open(path.c_str(), flags | O_CLOEXEC, mode)), path_(path) {
    if (fd_ < 0) throw Error(ExitCode::kOutput, cat("cannot open ", path.string(), ": ", std::strerror(errno)));
  }
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  void write_all(const std::string& data) {
    std::size_t written = 0;
    while (written < data.size()) {
      const ssize_t n = ::write(fd_, data.data() + written, data.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), ": ", std::strerror(errno)));
      written += static_cast<std::size_t>(n);
    }
  }
  void sync() {
    // EINVAL: this file system cannot sync (some cannot sync folders); there is nothing more to do.
    if (::fsync(fd_) != 0 && errno != EINVAL)
      throw Error(ExitCode::kOutput, cat("cannot fsync ", path_.string(), ": ", std::strerror(errno)));
  }

 private:
  int fd_;
  std::filesystem::path path_;
};

}  // namespace

void fsync_path(const std::filesystem::path& path) {
  FileDescriptor file(path, O_RDONLY);
  file.sync();
}

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
  const std::filesystem::path temporary = path.string() + ".tmp-" + std::to_string(::getpid());
  try {
    FileDescriptor file(temporary, O_WRONLY | O_CREAT | O_TRUNC);
    file.write_all(contents);
    file.sync();
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;  // nothing half-written stays behind (a target that is a folder, say)
    std::filesystem::remove(temporary, ignored);
    throw Error(ExitCode::kOutput,
                cat("cannot rename ", temporary.string(), " to ", path.string(), ": ", error.message()));
  }
  fsync_path(path.parent_path().empty() ? "." : path.parent_path());
}

void append_line_durably(const std::filesystem::path& path, const std::string& line) {
  FileDescriptor file(path, O_WRONLY | O_CREAT | O_APPEND);
  file.write_all(line + "\n");
  file.sync();
}

void ensure_writable_folder(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error)
    throw Error(ExitCode::kOutput, cat("cannot create output folder ", folder.string(), ": ", error.message()));
  const std::filesystem::path probe = folder / (".write-probe-" + std::to_string(::getpid()));
  { FileDescriptor file(probe, O_WRONLY | O_CREAT | O_TRUNC); }
  std::filesystem::remove(probe, error);
}

}  // namespace pstrain
