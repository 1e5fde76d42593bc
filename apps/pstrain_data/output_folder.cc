#include "output_folder.h"

#include "core/error.h"
#include "core/log.h"

namespace pstrain_data {

namespace fs = std::filesystem;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;
namespace data = pstrain::data;

void create_output_folder(const fs::path& output) {
  std::error_code ec;
  fs::create_directories(output, ec);
  if (ec || !fs::is_directory(output)) {
    throw Error(ExitCode::kOutput,
                cat("cannot create output folder ", output.string(), ec ? ": " + ec.message() : std::string()));
  }
}

void write_shard_folder(const fs::path& output, const std::vector<data::Samples>& train_shards,
                        const std::optional<data::Samples>& valid, const data::Samples& test) {
  create_output_folder(output);
  for (std::size_t i = 0; i < train_shards.size(); ++i) {
    data::write_shard(output / data::train_shard_file_name(i), train_shards[i]);
  }
  const fs::path valid_path = output / data::kValidShardFileName;
  std::error_code ec;
  if (valid) {
    data::write_shard(valid_path, *valid);
  } else if (fs::remove(valid_path, ec)) {  // the trainer would evaluate on another conversion's samples
    pstrain::log_info("removed stale ", valid_path.string(), " from an earlier conversion");
  }
  data::write_shard(output / data::kTestShardFileName, test);
  // Shards beyond the new count come from an earlier conversion; the trainer would take them as part of this one.
  for (const fs::path& stale : data::remove_train_shards_from(output, train_shards.size())) {
    pstrain::log_info("removed stale shard ", stale.string(), " from an earlier conversion");
  }
  data::write_data_manifest(output);  // last: the folder is whole once it exists
}

}  // namespace pstrain_data
