#include "core/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace pstrain {

Logger& Logger::instance() {
  static Logger logger;
  return logger;
}

void Logger::set_identity(const std::string& prefix) {
  std::lock_guard lock(mutex_);
  prefix_ = prefix;
}

void Logger::set_console(bool prints_info_to_stdout) {
  std::lock_guard lock(mutex_);
  console_ = prints_info_to_stdout;
}

void Logger::open_file(const std::string& path) {
  std::lock_guard lock(mutex_);
  file_.open(path, std::ios::app);
  if (!file_) throw Error(ExitCode::kOutput, cat("cannot write log file ", path));
  file_ << pending_;
  file_.flush();
  pending_.clear();
  pending_.shrink_to_fit();
}

static const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarning: return "warning";
    case LogLevel::kError: return "error";
  }
  return "?";
}

void Logger::write(LogLevel level, const std::string& message) {
  std::lock_guard lock(mutex_);
  const std::string line = cat("[", prefix_, "] ", level >= LogLevel::kWarning ? level_name(level) : "",
                               level >= LogLevel::kWarning ? ": " : "", message);
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", std::localtime(&now));
  if (file_.is_open()) {
    file_ << stamp << ' ' << level_name(level) << ' ' << line << '\n';
    file_.flush();
  } else if (pending_.size() < kPendingLimit) {
    pending_ += cat(stamp, ' ', level_name(level), ' ', line, '\n');
  }
  if (level >= LogLevel::kWarning) {
    std::cerr << line << std::endl;
  } else if (level == LogLevel::kInfo && console_) {
    std::cout << line << std::endl;
  }
}

}  // namespace pstrain
