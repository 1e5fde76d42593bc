#pragma once
// A file descriptor owned by one object (closed by its destructor), and a reader that cuts what arrives on a
// non-blocking descriptor into lines.
#include <string>
#include <vector>

namespace pstrain::launch {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset();

 private:
  int fd_ = -1;
};

// A pipe whose read end is non-blocking and close-on-exec; the write end goes to a child.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};
Pipe make_pipe();  // throws DriverError(kInternal) on failure

class LineReader {
 public:
  // Reads what is available on `fd` (non-blocking); complete lines go to `lines`. Returns false at end of file.
  bool read_from(int fd, std::vector<std::string>& lines);
  // What is left without a newline (at end of file).
  std::string take_rest();
  std::size_t bytes_read() const { return total_; }

 private:
  std::string partial_;
  std::size_t total_ = 0;
};

}  // namespace pstrain::launch
