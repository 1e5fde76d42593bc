#pragma once
// A run's --output-dir: what pstrain may do with it, decided before anything in it is written.
//
// The rule (docs/checkpoints.md): a user's outputs are never overwritten or mixed.
// - A fresh run (no --resume, or --resume auto that finds no checkpoint) starts only in a folder that holds no
//   earlier run: no pass folder, checkpoint or metrics.jsonl. Logs, TensorBoard files and config.ini alone (left by
//   a run that ended before its first pass) do not count: a fresh start purges their steps in TensorBoard.
// - --resume auto in a folder that holds a run but no checkpoint that fits this run refuses (ExitCode::kUsage),
//   listing why each checkpoint was skipped and which flags differ from the earlier run's config.ini.
// - Nothing is written until every rank has agreed that training starts (claim_run_folder): a run that fails
//   before that leaves the folder as it found it (and creates none).
// - One run at a time: the claim holds an exclusive lock on the folder for the run's lifetime, so a second job
//   started on the same folder refuses instead of mixing its files into the first one's.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/files.h"

namespace pstrain::job {

// What an output folder holds that belongs to an earlier run.
struct FolderContents {
  bool exists = false;
  std::vector<std::filesystem::path> pass_folders;  // oldest first
  std::vector<std::filesystem::path> checkpoints;   // newest first
  bool metrics = false;                             // a non-empty metrics.jsonl

  bool holds_run() const { return !pass_folders.empty() || !checkpoints.empty() || metrics; }
  std::string describe() const;  // "2 pass folder(s), 3 checkpoint(s), metrics.jsonl"
};

FolderContents inspect_run_folder(const std::filesystem::path& folder);

// Refuses, without writing, what cannot start: an output folder that cannot be created or written, a fresh run
// (no --resume) into a folder that holds a run, --init-from inside the output folder on a fresh start.
void check_run_folder(const std::filesystem::path& output_dir, bool resuming,
                      const std::optional<std::filesystem::path>& init_from, const FolderContents& contents);

// A checkpoint --resume auto passed over, and why.
using SkippedCheckpoint = std::pair<std::filesystem::path, std::string>;

// The refusal of --resume auto in a folder that holds a run none of whose checkpoints fits: every skipped
// checkpoint with its reason, the flags that differ from the earlier run's config.ini, and what to do.
std::string resume_refusal(const std::filesystem::path& output_dir, const FolderContents& contents,
                           const std::vector<SkippedCheckpoint>& skipped, const std::string& resolved_ini);

// "name = value" lines of two resolved configurations that differ: "hidden = 32 (the earlier run: 64)".
std::vector<std::string> differing_flags(const std::string& earlier_ini, const std::string& now_ini);

// The exclusive claim on an output folder (rank 0), held until destroyed: an flock on the folder itself, so no
// file is added for it and the kernel drops it when the process ends, however it ends.
class RunFolderClaim {
 public:
  // Creates the folder if needed and locks it; throws Error(kUsage) when another run holds it.
  explicit RunFolderClaim(const std::filesystem::path& folder);

 private:
  FileDescriptor folder_;
};

}  // namespace pstrain::job
