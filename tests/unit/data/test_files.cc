#include "test_files.h"

#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <fstream>
#include <iterator>

namespace pstrain::data::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : "test";
  path_ = fs::temp_directory_path() /
          ("pstrain-" + test + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void write_raw(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

void write_gz(const fs::path& path, const Bytes& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << "cannot write " << path;
  if (!bytes.empty()) {
    ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  }
  ASSERT_EQ(gzclose(file), Z_OK);
}

Bytes read_raw(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Bytes idx_bytes(std::uint32_t magic, const std::vector<std::uint32_t>& dims, const Bytes& values) {
  Bytes bytes;
  auto put32 = [&](std::uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<std::uint8_t>(value >> shift));
  };
  put32(magic);
  for (const std::uint32_t dim : dims) put32(dim);
  bytes.insert(bytes.end(), values.begin(), values.end());
  return bytes;
}

Samples make_samples(std::size_t count, std::uint64_t rows, std::uint64_t cols, std::uint32_t num_classes) {
  Samples samples;
  samples.meta.dataset = "unit-test";
  samples.meta.sample_shape = {rows, cols};
  samples.meta.num_classes = num_classes;
  samples.meta.sample_count = count;
  samples.meta.source = "make_samples";
  const std::size_t size = samples.meta.sample_size();
  for (std::size_t i = 0; i < count * size; ++i) samples.features.push_back(static_cast<float>(i % 256) / 255.0f);
  for (std::size_t i = 0; i < count; ++i) samples.labels.push_back(static_cast<std::int32_t>(i % num_classes));
  return samples;
}

void expect_error(const std::function<void()>& body, ExitCode code, const std::vector<std::string>& parts) {
  try {
    body();
  } catch (const Error& error) {
    EXPECT_EQ(static_cast<int>(error.code()), static_cast<int>(code)) << "message: " << error.what();
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos)
          << "message '" << error.what() << "' does not mention '" << part << "'";
    }
    return;
  }
  ADD_FAILURE() << "expected pstrain::Error mentioning '" << (parts.empty() ? "" : parts.front()) << "'";
}

}  // namespace pstrain::data::testing
