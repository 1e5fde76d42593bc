#include "output_folder.h"

#include "core/error.h"
#include "core/files.h"
#include "core/log.h"
#include "staging_folder.h"

namespace pstrain_data {

namespace fs = std::filesystem;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;
namespace data = pstrain::data;

void refuse_converted_folder(const fs::path& output) {
  const std::vector<std::string> found = data::conversion_files_in(output);
  if (found.empty()) return;
  std::size_t shards = 0;
  std::string named;
  for (const std::string& name : found) {
    if (name.starts_with("train-") && name.ends_with(".h5")) {
      ++shards;
    } else {
      named += cat(named.empty() ? "" : ", ", name);
    }
  }
  if (shards > 0) named += cat(named.empty() ? "" : ", ", shards, " train shard", shards == 1 ? "" : "s");
  throw Error(ExitCode::kUsage,
              cat(output.string(), " already holds a conversion (", named,
                  "): pstrain-data never overwrites or mixes conversions; choose a new --output, or remove the "
                  "folder first"));
}

void write_shard_folder(const fs::path& output, const std::vector<data::Samples>& train_shards,
                        const std::optional<data::Samples>& valid, const data::Samples& test,
                        const std::vector<ExtraFile>& extra_files) {
  refuse_converted_folder(output);
  StagingFolder staging(output);
  std::vector<std::string> names;
  for (const auto& [name, contents] : extra_files) {
    pstrain::write_file_atomically(staging.path() / name, contents);
    names.push_back(name);
  }
  for (std::size_t i = 0; i < train_shards.size(); ++i) {
    names.push_back(data::train_shard_file_name(i));
    data::write_shard(staging.path() / names.back(), train_shards[i]);
  }
  if (valid) {
    data::write_shard(staging.path() / data::kValidShardFileName, *valid);
    names.push_back(data::kValidShardFileName);
  }
  data::write_shard(staging.path() / data::kTestShardFileName, test);
  names.push_back(data::kTestShardFileName);
  data::write_data_manifest(staging.path());
  names.push_back(pstrain::kManifestName);  // last: the folder is whole once it exists
  staging.publish(names);
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
