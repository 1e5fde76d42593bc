#pragma once
// Helpers for tests that write files: a private temporary folder, raw and gzip'd file writers,
// and a matcher for pstrain::Error.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/shard.h"

namespace pstrain::data::testing {

// A fresh folder under the system temp folder, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

using Bytes = std::vector<std::uint8_t>;

void write_raw(const std::filesystem::path& path, const Bytes& bytes);
void write_gz(const std::filesystem::path& path, const Bytes& bytes);
Bytes read_raw(const std::filesystem::path& path);

// IDX file contents: big-endian header then the given values (pass `values` shorter or longer than the
// dimensions announce to build truncated or padded files).
Bytes idx_bytes(std::uint32_t magic, const std::vector<std::uint32_t>& dims, const Bytes& values);

// Small consistent samples: count samples of shape {rows, cols}, label i % num_classes.
Samples make_samples(std::size_t count, std::uint64_t rows = 2, std::uint64_t cols = 3, std::uint32_t num_classes = 4);

// Runs `body`, expects pstrain::Error with `code` whose message contains every one of `parts`.
void expect_error(const std::function<void()>& body, ExitCode code, const std::vector<std::string>& parts);

}  // namespace pstrain::data::testing
