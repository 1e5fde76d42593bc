#include "data/cifar.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "core/error.h"

namespace pstrain::data {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTrainNames[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
                                       "data_batch_5.bin"};
constexpr const char* kTestName = "test_batch.bin";
constexpr const char* kTarball = "cifar-10-binary.tar.gz";
constexpr const char* kUrl = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz";

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool is_folder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool holds_any_batch(const fs::path& folder) {
  if (is_file(folder / kTestName)) return true;
  return std::any_of(std::begin(kTrainNames), std::end(kTrainNames),
                     [&](const char* name) { return is_file(folder / name); });
}

// What the user most likely has instead of the binary batches, as advice for the error message.
std::string advice(const fs::path& input) {
  if (is_file(input / kTarball)) return cat(" (", kTarball, " is there: unpack it first, tar xzf ", kTarball, ")");
  if (is_folder(input / "cifar-10-batches-py") || is_file(input / "data_batch_1")) {
    return " (this looks like the Python (pickle) version of CIFAR-10; pstrain-data reads the binary version)";
  }
  return cat(" (the binary version: ", kUrl, ")");
}

std::uint64_t record_count(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ExitCode::kInputData, cat(path.string(), ": file does not exist"));
  if (!fs::is_regular_file(path, ec)) throw Error(ExitCode::kInputData, cat(path.string(), ": is not a file"));
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw Error(ExitCode::kInputData, cat(path.string(), ": cannot read its size: ", ec.message()));
  if (size == 0 || size % kCifarRecordBytes != 0) {
    throw Error(ExitCode::kInputData,
                cat(path.string(), ": size ", size, " bytes is not a positive multiple of the ", kCifarRecordBytes,
                    "-byte CIFAR-10 record (1 label byte + 3072 pixel bytes); ",
                    size > kCifarRecordBytes ? cat(size / kCifarRecordBytes, " whole records and ",
                                                   size % kCifarRecordBytes, " bytes left over")
                                             : std::string("not even one record"),
                    " (a distributed batch file is 10000 records, 30730000 bytes)"));
  }
  return size / kCifarRecordBytes;
}

// Appends the records of one file, transposing each image from planar CHW to channels-last HWC.
void append_batch(const fs::path& path, std::uint64_t records, Samples& samples) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": cannot open: ", std::strerror(errno)));
  }
  constexpr std::size_t kPlane = kCifarSide * kCifarSide;
  constexpr std::uint64_t kRecordsPerRead = 1000;  // ~3 MB at a time
  std::vector<unsigned char> buffer;
  for (std::uint64_t first = 0; first < records; first += kRecordsPerRead) {
    const std::uint64_t count = std::min(kRecordsPerRead, records - first);
    buffer.resize(count * kCifarRecordBytes);
    in.read(reinterpret_cast<char*>(buffer.data()), static_cast<std::streamsize>(buffer.size()));
    if (static_cast<std::size_t>(in.gcount()) != buffer.size()) {
      // The size was checked just before: the file shrank or the disk failed under us.
      throw Error(ExitCode::kInputData, cat(path.string(), ": read failed at record ", first, " of ", records,
                                            " (the file changed while being read?)"));
    }
    for (std::uint64_t r = 0; r < count; ++r) {
      const unsigned char* record = buffer.data() + r * kCifarRecordBytes;
      if (record[0] >= kCifar10Classes) {
        throw Error(ExitCode::kInputData,
                    cat(path.string(), ": record ", first + r, " (byte offset ", (first + r) * kCifarRecordBytes,
                        ") has label ", int{record[0]}, "; CIFAR-10 labels are 0..", kCifar10Classes - 1,
                        " (is this a CIFAR-10 binary batch file?)"));
      }
      samples.labels.push_back(record[0]);
      const unsigned char* pixels = record + 1;
      const std::size_t base = samples.features.size();
      samples.features.resize(base + kCifarPixelBytes);
      float* out = samples.features.data() + base;
      for (std::size_t p = 0; p < kPlane; ++p) {  // p = y * 32 + x
        for (std::size_t c = 0; c < kCifarChannels; ++c) {
          out[p * kCifarChannels + c] = static_cast<float>(pixels[c * kPlane + p]) / 255.0f;
        }
      }
    }
  }
}

}  // namespace

Cifar10Files find_cifar10_files(const fs::path& input) {
  fs::path folder = input;
  if (!holds_any_batch(input) && is_folder(input / kCifar10Folder)) folder = input / kCifar10Folder;

  Cifar10Files files;
  std::string missing;
  for (const char* name : kTrainNames) {
    files.train.push_back(folder / name);
    if (!is_file(files.train.back())) missing += cat(missing.empty() ? "" : ", ", name);
  }
  files.test = folder / kTestName;
  if (!is_file(files.test)) missing += cat(missing.empty() ? "" : ", ", kTestName);
  if (!missing.empty()) {
    throw Error(ExitCode::kInputData,
                cat(folder.string(), ": missing ", missing, "; expected the CIFAR-10 binary batches data_batch_1.bin ",
                    "... data_batch_5.bin and test_batch.bin in the input folder or in its ", kCifar10Folder,
                    "/ subfolder", advice(folder)));
  }
  return files;
}

Samples read_cifar10_batches(const std::vector<fs::path>& files) {
  PSTRAIN_ASSERT(!files.empty(), "no CIFAR-10 batch files to read");
  // Sizes first: a bad file is reported before minutes of reading the others.
  std::vector<std::uint64_t> counts;
  std::uint64_t total = 0;
  for (const fs::path& path : files) {
    counts.push_back(record_count(path));
    total += counts.back();
  }

  Samples samples;
  samples.meta.dataset = kCifar10Name;
  samples.meta.sample_shape = {kCifarSide, kCifarSide, kCifarChannels};
  samples.meta.num_classes = kCifar10Classes;
  samples.meta.sample_count = total;
  samples.features.reserve(total * kCifarPixelBytes);
  samples.labels.reserve(total);
  for (std::size_t i = 0; i < files.size(); ++i) {
    append_batch(files[i], counts[i], samples);
    samples.meta.source += cat(i ? ", " : "", files[i].filename().string());
  }
  return samples;
}

}  // namespace pstrain::data
