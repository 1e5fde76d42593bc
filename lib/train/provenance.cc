#include "train/provenance.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/files.h"
#include "data/shard.h"
#include "train/metrics.h"

#ifndef PSTRAIN_GIT_COMMIT
#define PSTRAIN_GIT_COMMIT "unknown"
#endif

namespace pstrain::train {

namespace {

// The shard's CRC-32 as 8 hex digits, as its folder's MANIFEST writes it.
std::string crc32_text(const std::filesystem::path& path) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", data::shard_crc32(path));
  return text;
}

std::string quoted(const std::string& text) {
  return "\"" + json_escape(text) + "\"";
}

// The resolved INI ("key = value" lines) as a JSON object of strings.
std::string flags_object(const std::string& resolved_ini) {
  std::istringstream lines(resolved_ini);
  std::string line, object;
  while (std::getline(lines, line)) {
    const std::size_t equals = line.find(" = ");
    if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
    object +=
        cat(object.empty() ? "" : ",\n    ", quoted(line.substr(0, equals)), ": ", quoted(line.substr(equals + 3)));
  }
  return "{\n    " + object + "\n  }";
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

void write_provenance(const JobContext& job, const std::string& resolved_ini) {
  std::string shards;
  std::vector<std::filesystem::path> files = job.data.train_shards;
  files.push_back(job.data.test_shard);
  for (const auto& path : files) {
    shards += cat(shards.empty() ? "" : ",\n      ", quoted(path.filename().string()), ": ", quoted(crc32_text(path)));
  }
  const std::string json =
      cat("{\n  \"version\": ", quoted(PSTRAIN_VERSION), ",\n  \"git_commit\": ", quoted(PSTRAIN_GIT_COMMIT),
          ",\n  \"flags\": ", flags_object(resolved_ini),
          ",\n  \"model\": {\n    \"source\": ", quoted(job.model.spec.source),
          ",\n    \"parameters\": ", job.model.parameter_count, ",\n    \"description\": ", quoted(job.model.spec.text),
          "\n  },\n  \"data_fingerprint\": {\n    \"data_dir\": ", quoted(job.config.data_dir.string()),
          ",\n    \"crc32\": {\n      ", shards, "\n    }\n  },\n  \"written_at\": ", quoted(utc_now()), "\n}\n");
  write_file_atomically(job.config.output_dir / "provenance.json", json);
}

}  // namespace pstrain::train
