#pragma once
// A conversion's files are written into a staging folder inside --output and renamed into --output only once all
// of them are complete, the MANIFEST last: a conversion that fails or is killed midway leaves no shard under a
// final name, and the output folder as it was (a folder this conversion created is removed again).
#include <filesystem>
#include <string>
#include <vector>

namespace pstrain_data {

class StagingFolder {
 public:
  // Creates `output` when missing (Error(kOutput) when it cannot) and OUTPUT/.pstrain-data-partial-PID in it.
  explicit StagingFolder(std::filesystem::path output);
  // Removes the staging folder and what is in it; after a failure, also `output` when this object created it.
  ~StagingFolder();
  StagingFolder(const StagingFolder&) = delete;
  StagingFolder& operator=(const StagingFolder&) = delete;

  // Where the files go until publish().
  const std::filesystem::path& path() const { return staging_; }

  // Renames `names` (files in path()), in this order, into the output folder, never over a file of that name:
  // when one is there already (another conversion finished into the same folder meanwhile), the files renamed so
  // far are taken back and Error(kUsage) names the folder. Then fsyncs the output folder.
  void publish(const std::vector<std::string>& names);

 private:
  std::filesystem::path output_;
  std::filesystem::path staging_;
  bool created_output_ = false;
  bool published_ = false;
};

}  // namespace pstrain_data
