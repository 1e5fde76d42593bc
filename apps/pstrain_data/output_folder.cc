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

namespace pstrain_data {

namespace {

void check_shards_of_folder(const fs::path& folder) {
  std::vector<fs::path> shards = data::list_train_shards(folder);
  const fs::path test = data::test_shard_path(folder);
  const data::ShardMeta reference = data::read_shard(test).meta;
  if (std::error_code ec; fs::exists(folder / data::kValidShardFileName, ec)) {
    shards.push_back(folder / data::kValidShardFileName);
  }
  for (const fs::path& shard : shards) {
    const data::ShardMeta meta = data::read_shard(shard).meta;
    if (meta.sample_shape != reference.sample_shape || meta.num_classes != reference.num_classes) {
      throw Error(ExitCode::kInputData,
                  cat(shard.string(), ": ", meta.sample_size(), " features and ", meta.num_classes, " classes, but ",
                      test.string(), " has ", reference.sample_size(), " and ", reference.num_classes,
                      " (the shards must share attribute sample_shape and num_classes)"));
    }
  }
}

}  // namespace

void write_manifest_of_folder(const fs::path& folder) {
  data::write_data_manifest(folder);
  try {
    check_shards_of_folder(folder);
  } catch (...) {
    std::error_code ignored;
    fs::remove(folder / pstrain::kManifestName, ignored);  // a MANIFEST vouches only for shards pstrain can train on
    throw;
  }
  pstrain::log_info("wrote ", (folder / pstrain::kManifestName).string(),
                    ": every shard was read back and checked, and pstrain will refuse any that changes");
}

}  // namespace pstrain_data
