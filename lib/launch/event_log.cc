#include "launch/event_log.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include "core/error.h"
#include "core/files.h"
#include "core/log.h"
#include "launch/exit_codes.h"

namespace pstrain::launch {

namespace {

std::string iso_time(double unix_time) {
  const auto seconds = static_cast<std::time_t>(unix_time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  const int millis = static_cast<int>((unix_time - std::floor(unix_time)) * 1000);
  return cat(text, ".", std::string(millis < 10 ? "00" : millis < 100 ? "0" : ""), millis, "Z");
}

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const EventRecord& record) {
  nlohmann::json out;
  out["time"] = iso_time(record.unix_time);
  out["unix_time"] = std::round(record.unix_time * 1000) / 1000;
  out["event"] = record.event;
  out["hosts"] = record.hosts;
  out["detail"] = record.detail;
  out["launch"] = record.launch;
  if (record.world != nullptr) {
    out["world"] = describe(record.world->hosts);
    out["ranks"] = record.world->ranks();
    const auto& layout = record.world->layout;  // none while pstrain's choice is not known yet
    out["layout"] = layout ? nlohmann::json{{"pservers", layout->pservers}, {"trainers", layout->trainers}}
                           : nlohmann::json(nullptr);
  } else {
    out["world"] = out["ranks"] = out["layout"] = nullptr;
  }
  out["resumed_from"] = record.resumed ? nlohmann::json(record.resumed->checkpoint) : nlohmann::json(nullptr);
  out["resumed_global_step"] = record.resumed ? nlohmann::json(record.resumed->global_step) : nlohmann::json(nullptr);
  out["steps_lost"] = or_null(record.steps_lost);
  out["seconds_to_next_step"] = record.seconds_to_next_step
                                    ? nlohmann::json(std::round(*record.seconds_to_next_step * 1000) / 1000)
                                    : nlohmann::json(nullptr);
  out["restarts"] = record.restarts;
  return out;
}

EventLog::EventLog(const std::filesystem::path& path) : path_(path) {
  try {
    ensure_writable_folder(path.parent_path());
  } catch (const Error& error) {
    throw DriverError(DriverExit::kOutput, error.what());
  }
}

void EventLog::write(const EventRecord& record) {
  try {  // not fatal: training goes on without its log
    append_line_durably(path_, to_json(record).dump());
  } catch (const Error& error) {
    log_warning("could not append to ", path_.string(), ": ", error.what());
  }
}

}  // namespace pstrain::launch
