#pragma once
// Durable file operations: what makes "written" mean "on disk, complete, under its final name".
#include <filesystem>
#include <string>

namespace pstrain {

// fsync a file or folder by path; throws Error(kOutput) naming it.
void fsync_path(const std::filesystem::path& path);
// Writes to a temporary name beside `path`, fsyncs, renames over `path`, fsyncs the folder.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);
// Appends one line and fsyncs (metrics.jsonl).
void append_line_durably(const std::filesystem::path& path, const std::string& line);
// Creates `folder` (and parents) and proves it is writable by creating and removing a probe file.
void ensure_writable_folder(const std::filesystem::path& folder);

}  // namespace pstrain
