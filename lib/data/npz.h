#pragma once
// Reader for NumPy's .npz archives (numpy.savez and numpy.savez_compressed): a zip file of NAME.npy members,
// stored or deflated, zip64 for large ones. The zip container is read by libzip (Debian: libzip-dev), which also
// checks each member's CRC-32; the members by parse_npy (data/npy.h).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "data/npy.h"

struct zip;  // libzip's archive handle

namespace pstrain::data {

class NpzArchive {
 public:
  // Opens the archive; throws Error(kInputData) naming the file when it is missing or not a zip file.
  explicit NpzArchive(std::filesystem::path path);
  ~NpzArchive();
  NpzArchive(const NpzArchive&) = delete;
  NpzArchive& operator=(const NpzArchive&) = delete;

  // The arrays' keys as numpy.load(...).files lists them: member names without ".npy", in archive order.
  const std::vector<std::string>& keys() const { return keys_; }
  bool contains(const std::string& key) const;
  // The array `key` (member key.npy), parsed and checked; messages call it "PATH:key". Throws Error(kInputData),
  // listing the archive's keys when there is no such array.
  NpyArray read(const std::string& key) const;

 private:
  std::filesystem::path path_;
  zip* archive_ = nullptr;
  std::vector<std::string> keys_;
};

}  // namespace pstrain::data
