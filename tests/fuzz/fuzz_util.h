#pragma once
// Shared by the fuzz targets: the parsers under test read files, so each input is written to a private
// scratch folder first (tmpfs when there is one), and the only acceptable failure is pstrain::Error with an
// exit code for bad input. Anything else (another exception, an internal error, a sanitizer report, a crash,
// a hang, an allocation beyond -malloc_limit_mb) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace pstrain::fuzz {

// One folder per process, created on first use and removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path folder = [] {
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    std::filesystem::path path = base / ("pstrain-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch(), ignored);
    });
    return path;
  }();
  return folder;
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) std::abort();  // the scratch folder is broken: not a finding about pstrain
}

// Splits a fuzz input into the files of a folder: the parts are separated by kFileSeparator. Missing parts
// are empty; parts beyond `count` are dropped.
inline constexpr std::string_view kFileSeparator = "\n--pstrain-fuzz-next-file--\n";
inline std::vector<std::string_view> split_files(std::string_view input, std::size_t count) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < count) {
    const std::size_t at = input.find(kFileSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + kFileSeparator.size());
  }
  parts.push_back(input);
  parts.resize(count);
  return parts;
}

// Runs the parser; pstrain::Error for bad input (kInputData or kUsage) is the expected way to refuse it.
// Internal errors (failed invariants) abort, so that libFuzzer reports them with the input.
template <typename Body>
void expect_clean(Body body) {
  try {
    body();
  } catch (const Error& error) {
    if (error.code() == ExitCode::kInternal) {
      std::fprintf(stderr, "internal error on fuzz input: %s\n", error.what());
      std::abort();
    }
  }
}

}  // namespace pstrain::fuzz
