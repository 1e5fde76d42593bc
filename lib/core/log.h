#pragma once
// Logging with a rank/role prefix. Every line goes to this rank's log file (node_<rank>/train.log or
// server.log) once one is opened (lines before that are kept and written first); lines at kInfo and above from the rank
// chosen as "console" also go to stdout, so a multi-rank job prints one readable stream instead of N interleaved ones.
// Warnings and errors go to stderr from every rank.
#include <fstream>
#include <mutex>
#include <string>

#include "core/error.h"

namespace pstrain {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

class Logger {
 public:
  static Logger& instance();

  // "rank 2 trainer 1" style prefix for every line.
  void set_identity(const std::string& prefix);
  void set_console(bool prints_info_to_stdout);
  void open_file(const std::string& path);  // throws Error(kOutput) when the file cannot be created

  void write(LogLevel level, const std::string& message);

 private:
  Logger() = default;
  std::mutex mutex_;
  std::string prefix_ = "pstrain";
  bool console_ = true;
  std::ofstream file_;
  // Lines written before the file is opened: a run opens its log only once it is sure to start (a run that
  // fails before that leaves no file behind, job/run_folder.h), and the file then begins with them.
  static constexpr std::size_t kPendingLimit = 1 << 20;
  std::string pending_;
};

template <typename... Parts>
void log_info(const Parts&... parts) {
  Logger::instance().write(LogLevel::kInfo, cat(parts...));
}
template <typename... Parts>
void log_debug(const Parts&... parts) {
  Logger::instance().write(LogLevel::kDebug, cat(parts...));
}
template <typename... Parts>
void log_warning(const Parts&... parts) {
  Logger::instance().write(LogLevel::kWarning, cat(parts...));
}
template <typename... Parts>
void log_error(const Parts&... parts) {
  Logger::instance().write(LogLevel::kError, cat(parts...));
}

}  // namespace pstrain
