#include "core/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.h"

namespace pstrain {

FileDescriptor::FileDescriptor(const std::filesystem::path& path, int flags, mode_t mode)
    : fd_(::open(path.c_str(), flags | O_CLOEXEC, mode)), path_(path) {
  if (fd_ < 0) throw Error(ExitCode::kOutput, cat("cannot open ", path.string(), ": ", std::strerror(errno)));
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

void FileDescriptor::write_all(const std::string& data) {
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), ": ", std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
}

void FileDescriptor::sync() {
  // EINVAL: this file system cannot sync (some cannot sync folders); there is nothing more to do.
  if (::fsync(fd_) != 0 && errno != EINVAL)
    throw Error(ExitCode::kOutput, cat("cannot fsync ", path_.string(), ": ", std::strerror(errno)));
}

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

void check_writable_folder(const std::filesystem::path& folder) {
  std::error_code error;
  if (std::filesystem::is_directory(folder, error)) {
    const std::filesystem::path probe = folder / (".write-probe-" + std::to_string(::getpid()));
    try {
      FileDescriptor file(probe, O_WRONLY | O_CREAT | O_TRUNC);
    } catch (const Error& failure) {
      throw Error(ExitCode::kOutput, cat("output folder ", folder.string(), " is not writable: ", failure.what()));
    }
    std::filesystem::remove(probe, error);
    return;
  }
  // Not there yet: the nearest folder that exists must let us create it (and nothing on the way may be a file).
  std::filesystem::path ancestor = std::filesystem::absolute(folder, error);
  while (!std::filesystem::exists(ancestor, error) && ancestor.has_relative_path()) ancestor = ancestor.parent_path();
  if (!std::filesystem::is_directory(ancestor, error) || ::access(ancestor.c_str(), W_OK | X_OK) != 0) {
    throw Error(ExitCode::kOutput, cat("cannot create output folder ", folder.string(), ": ", ancestor.string(),
                                       " is not a writable folder"));
  }
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
