#include "launch/fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "launch/exit_codes.h"

namespace pstrain::launch {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Pipe make_pipe() {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    throw DriverError(DriverExit::kInternal, cat("pipe: ", std::strerror(errno)));
  }
  Pipe pipe{UniqueFd(ends[0]), UniqueFd(ends[1])};
  ::fcntl(pipe.read.get(), F_SETFL, ::fcntl(pipe.read.get(), F_GETFL) | O_NONBLOCK);
  return pipe;
}

bool LineReader::read_from(int fd, std::vector<std::string>& lines) {
  char buffer[8192];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) return false;
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK;  // nothing more now; another error: treat as the end
    }
    total_ += static_cast<std::size_t>(got);
    partial_.append(buffer, static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t newline; (newline = partial_.find('\n', start)) != std::string::npos; start = newline + 1) {
      lines.push_back(partial_.substr(start, newline - start));
    }
    partial_.erase(0, start);
  }
}

std::string LineReader::take_rest() {
  std::string rest;
  rest.swap(partial_);
  return rest;
}

}  // namespace pstrain::launch
