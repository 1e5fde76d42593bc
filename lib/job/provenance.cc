#include "job/provenance.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/files.h"
#include "data/shard.h"
#include "report/json_line.h"

#ifndef PSTRAIN_GIT_COMMIT
#define PSTRAIN_GIT_COMMIT "unknown"
#endif

namespace pstrain::job {

namespace {

// The shard's CRC-32 as 8 hex digits, as its folder's MANIFEST writes it.
std::string crc32_text(const std::filesystem::path& path) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", data::shard_crc32(path));
  return text;
}

// The resolved INI ("key = value" lines) as a JSON object of strings, in the INI's order.
report::OrderedJson flags_object(const std::string& resolved_ini) {
  std::istringstream lines(resolved_ini);
  std::string line;
  report::OrderedJson object = report::OrderedJson::object();
  while (std::getline(lines, line)) {
    const std::size_t equals = line.find(" = ");
    if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
    object[line.substr(0, equals)] = line.substr(equals + 3);
  }
  return object;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace

void write_provenance(const config::TrainConfig& config, const run_common::DataPlan& data, const nn::ModelPlan& model,
                      const std::string& resolved_ini) {
  std::vector<std::filesystem::path> files = data.train_shards;
  files.push_back(data.test_shard);
  report::OrderedJson shards = report::OrderedJson::object();
  for (const auto& path : files) shards[path.filename().string()] = crc32_text(path);
  report::OrderedJson provenance = report::OrderedJson::object();
  provenance["version"] = PSTRAIN_VERSION;
  provenance["git_commit"] = PSTRAIN_GIT_COMMIT;
  provenance["flags"] = flags_object(resolved_ini);
  provenance["model"] = {{"source", model.spec.source},
                         {"parameters", model.parameter_count},
                         {"description", model.spec.text}};
  provenance["data_fingerprint"] = {{"data_dir", config.data_dir.string()}, {"crc32", shards}};
  provenance["written_at"] = utc_now();
  write_file_atomically(config.output_dir / "provenance.json", report::json_document(provenance));
}

}  // namespace pstrain::job
