#pragma once
// Durable file operations: what makes "written" mean "on disk, complete, under its final name".
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace pstrain {

// RAII for a POSIX file descriptor; throws Error(kOutput) naming the file when it cannot be opened.
class FileDescriptor {
 public:
  FileDescriptor(const std::filesystem::path& path, int flags, mode_t mode = 0644);
  ~FileDescriptor();
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  void write_all(const std::string& data);
  void sync();
  int get() const { return fd_; }

 private:
  int fd_;
  std::filesystem::path path_;
};

// fsync a file or folder by path; throws Error(kOutput) naming it.
void fsync_path(const std::filesystem::path& path);
// Writes to a temporary name beside `path`, fsyncs, renames over `path`, fsyncs the folder.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);
// Appends one line and fsyncs (metrics.jsonl).
void append_line_durably(const std::filesystem::path& path, const std::string& line);
// Proves, without creating or changing anything, that `folder` is writable or could be created; throws
// Error(kOutput) naming it.
void check_writable_folder(const std::filesystem::path& folder);
// Creates `folder` (and parents) and proves it is writable by creating and removing a probe file.
void ensure_writable_folder(const std::filesystem::path& folder);

}  // namespace pstrain
