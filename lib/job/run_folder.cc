#include "job/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "checkpoint/checkpoint.h"
#include "checkpoint/pass_folder.h"
#include "core/error.h"

namespace pstrain::job {

namespace fs = std::filesystem;

std::string FolderContents::describe() const {
  std::string text;
  const auto add = [&text](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (!pass_folders.empty()) add(cat(pass_folders.size(), " pass folder(s)"));
  if (!checkpoints.empty()) add(cat(checkpoints.size(), " checkpoint(s)"));
  if (metrics) add("metrics.jsonl");
  return text.empty() ? std::string("nothing of a run") : text;
}

FolderContents inspect_run_folder(const fs::path& folder) {
  FolderContents contents;
  std::error_code error;
  contents.exists = fs::is_directory(folder, error);
  if (!contents.exists) return contents;
  contents.pass_folders = checkpoint::list_pass_folders(folder);
  contents.checkpoints = checkpoint::list_checkpoints(folder);
  const fs::path metrics = folder / "metrics.jsonl";
  contents.metrics = fs::is_regular_file(metrics, error) && fs::file_size(metrics, error) > 0;
  return contents;
}

namespace {

bool inside(const fs::path& path, const fs::path& folder) {
  std::error_code error;
  const fs::path a = fs::weakly_canonical(path, error);
  const fs::path b = fs::weakly_canonical(folder, error);
  const auto [end, ignored] = std::mismatch(b.begin(), b.end(), a.begin(), a.end());
  return end == b.end();
}

}  // namespace

void check_run_folder(const fs::path& output_dir, bool resuming, const std::optional<fs::path>& init_from,
                      const FolderContents& contents) {
  check_writable_folder(output_dir);
  if (!resuming && init_from && inside(*init_from, output_dir)) {
    throw Error(ExitCode::kUsage,
                cat("--init-from ", init_from->string(), " is inside --output-dir ", output_dir.string(),
                    ": a new run needs a folder of its own (the pass folder "
                    "it starts from stays where it is)"));
  }
  if (resuming || !contents.holds_run()) return;
  if (!contents.checkpoints.empty()) {
    throw Error(ExitCode::kUsage, cat(output_dir.string(), " already holds an earlier run (", contents.describe(),
                                      "; newest checkpoint ", contents.checkpoints.front().filename().string(),
                                      "): continue that run with --resume auto, or start fresh with a new "
                                      "--output-dir"));
  }
  std::string start_from;
  if (!contents.pass_folders.empty())
    start_from = cat(", or start from one with --init-from ", contents.pass_folders.back().string());
  throw Error(ExitCode::kUsage, cat(output_dir.string(), " already holds an earlier run (", contents.describe(),
                                    "); pstrain does not overwrite it: choose a new --output-dir", start_from));
}

namespace {

std::map<std::string, std::string> ini_values(const std::string& ini) {
  std::map<std::string, std::string> values;
  std::istringstream in(ini);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto equals = line.find(" = ");
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 3);
  }
  return values;
}

// Flags that say where a run's files go or how it resumes: they may differ between a run and its resume.
bool describes_the_run_itself(const std::string& name) {
  return name == "resume" || name == "output-dir" || name == "config";
}

// The reasons checkpoints were skipped, each with the checkpoints it applies to (newest first), a checkpoint's
// own path taken out of its reason so that one reason shared by all of them is said once.
std::vector<std::pair<std::string, std::vector<std::string>>> skipped_by_reason(
    const std::vector<SkippedCheckpoint>& skipped) {
  std::vector<std::pair<std::string, std::vector<std::string>>> grouped;
  for (const auto& [folder, why] : skipped) {
    std::string reason = why;
    const std::string prefix = folder.string() + "/";
    for (auto at = reason.find(prefix); at != std::string::npos; at = reason.find(prefix))
      reason.erase(at, prefix.size());
    const auto same = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == reason; });
    if (same == grouped.end()) {
      grouped.push_back({reason, {folder.filename().string()}});
    } else {
      same->second.push_back(folder.filename().string());
    }
  }
  return grouped;
}

}  // namespace

std::vector<std::string> differing_flags(const std::string& earlier_ini, const std::string& now_ini) {
  const auto before = ini_values(earlier_ini);
  const auto now = ini_values(now_ini);
  std::vector<std::string> lines;
  for (const auto& [name, value] : now) {
    if (describes_the_run_itself(name)) continue;
    const auto was = before.find(name);
    if (was == before.end()) {
      lines.push_back(cat(name, " = ", value, " (the earlier run did not set it)"));
    } else if (was->second != value) {
      lines.push_back(cat(name, " = ", value, " (the earlier run: ", was->second, ")"));
    }
  }
  for (const auto& [name, value] : before) {
    if (!describes_the_run_itself(name) && now.count(name) == 0) {
      lines.push_back(cat(name, " not set (the earlier run: ", value, ")"));
    }
  }
  return lines;
}

std::string resume_refusal(const fs::path& output_dir, const FolderContents& contents,
                           const std::vector<SkippedCheckpoint>& skipped, const std::string& resolved_ini) {
  std::ostringstream text;
  text << "--resume auto: " << output_dir.string() << " holds an earlier run (" << contents.describe()
       << ") and no checkpoint of it fits this run; pstrain does not overwrite it.";
  if (contents.checkpoints.empty()) text << "\n  it has no checkpoint (the earlier run wrote none)";
  for (const auto& [why, names] : skipped_by_reason(skipped)) {
    text << "\n  skipped " << names.size() << " checkpoint(s) in " << (output_dir / "checkpoints").string() << " ("
         << names.front()
         << (names.size() > 2    ? " ... "
             : names.size() == 2 ? ", "
                                 : "")
         << (names.size() > 1 ? names.back() : std::string()) << "): " << why;
  }
  const fs::path earlier_config = output_dir / "config.ini";
  std::ifstream in(earlier_config);
  if (in) {
    const std::string earlier((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto differences = differing_flags(earlier, resolved_ini);
    if (!differences.empty()) text << "\n  flags that differ from the earlier run's " << earlier_config.string() << ":";
    for (const std::string& line : differences) text << "\n    " << line;
    text << "\n  To continue that run, give its flags: --config " << earlier_config.string() << " --resume auto.";
  }
  text << "\n  To start a new run, choose another --output-dir.";
  return text.str();
}

RunFolderClaim::RunFolderClaim(const fs::path& folder)
    : folder_((ensure_writable_folder(folder), folder), O_RDONLY | O_DIRECTORY) {
  if (::flock(folder_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      throw Error(ExitCode::kUsage, cat(folder.string(),
                                        " is in use by another pstrain run (it holds the folder's "
                                        "lock); wait for it to end, or choose another --output-dir"));
    }
    throw Error(ExitCode::kOutput, cat("cannot lock ", folder.string(), ": ", std::strerror(errno)));
  }
}

}  // namespace pstrain::job
