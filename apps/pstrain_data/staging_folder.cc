#include "staging_folder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/files.h"
#include "data/shard.h"

namespace pstrain_data {

namespace fs = std::filesystem;
using pstrain::cat;
using pstrain::Error;
using pstrain::ExitCode;

namespace {

// rename(2) that fails with EEXIST instead of replacing `to`. File systems without RENAME_NOREPLACE (some network
// ones answer EINVAL) get a link, which fails on an existing name too, and an unlink of the old name.
int rename_no_replace(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  if (::link(from.c_str(), to.c_str()) != 0) return errno;
  return ::unlink(from.c_str()) == 0 ? 0 : errno;
}

}  // namespace

StagingFolder::StagingFolder(fs::path output) : output_(std::move(output)) {
  std::error_code ec;
  created_output_ = !fs::exists(output_, ec);
  fs::create_directories(output_, ec);
  if (ec || !fs::is_directory(output_)) {
    throw Error(ExitCode::kOutput,
                cat("cannot create output folder ", output_.string(), ec ? ": " + ec.message() : std::string()));
  }
  staging_ = output_ / (pstrain::data::kConversionStagingPrefix + std::to_string(::getpid()));
  if (!fs::create_directory(staging_, ec) || ec) {
    const std::string why = ec ? ec.message() : "it exists";
    if (created_output_) fs::remove(output_, ec);
    throw Error(ExitCode::kOutput, cat("cannot create ", staging_.string(), ": ", why));
  }
}

StagingFolder::~StagingFolder() {
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
  // Only an empty folder: whatever else is there now is not ours to remove.
  if (!published_ && created_output_) fs::remove(output_, ignored);
}

void StagingFolder::publish(const std::vector<std::string>& names) {
  std::vector<std::string> moved;
  for (const std::string& name : names) {
    if (const int error = rename_no_replace(staging_ / name, output_ / name)) {
      for (const std::string& back : moved) rename_no_replace(output_ / back, staging_ / back);
      if (error == EEXIST) {
        throw Error(ExitCode::kUsage, cat(output_.string(), " received ", name,
                                          " from another conversion while this one ran: pstrain-data never "
                                          "overwrites or mixes conversions; choose a new --output"));
      }
      throw Error(ExitCode::kOutput, cat("cannot move ", name, " into ", output_.string(), ": ", std::strerror(error)));
    }
    moved.push_back(name);
  }
  published_ = true;
  pstrain::fsync_path(output_);
}

}  // namespace pstrain_data
