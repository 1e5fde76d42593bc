#pragma once
// OUTPUT/elastic.jsonl: one JSON object per line, appended and fsynced (a rerun of the same command continues the
// same run and the same file). Fields (null where not known):
//   time (ISO 8601 UTC), unix_time, event, hosts (the event's), detail, launch (1-based number of the job the
//   record belongs to), world ("host:ranks,..."), ranks, layout {pservers, trainers}, resumed_from (checkpoint
//   folder), resumed_global_step, steps_lost, seconds_to_next_step (from the event to the first training step of
//   the job that followed it), restarts (failures so far).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/job_output.h"
#include "launch/world_plan.h"

namespace pstrain::launch {

struct EventRecord {
  double unix_time = 0;
  std::string event;
  std::vector<std::string> hosts;
  std::string detail;
  int launch = 0;
  const World* world = nullptr;
  std::optional<ResumePoint> resumed;
  std::optional<std::int64_t> steps_lost;
  std::optional<double> seconds_to_next_step;
  int restarts = 0;
};

nlohmann::json to_json(const EventRecord& record);

class EventLog {
 public:
  explicit EventLog(const std::filesystem::path& path);  // throws DriverError(kOutput): folder not writable
  void write(const EventRecord& record);

 private:
  std::filesystem::path path_;
};

}  // namespace pstrain::launch
