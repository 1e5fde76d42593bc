#include "inference/npy_writer.h"

#include "core/error.h"

namespace pstrain::inference {

namespace {
constexpr char kMagic[] = "\x93NUMPY";
}  // namespace

std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<float>& values) {
  std::string extents;
  for (const std::size_t extent : shape) extents += std::to_string(extent) + ",";
  if (shape.size() > 1) extents.pop_back();  // (3,) for one axis, (3,4) for more
  std::string header = cat("{'descr': '<f4', 'fortran_order': False, 'shape': (", extents, "), }");
  // The whole preamble (magic, version, length, header, newline) is a multiple of 64 bytes.
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string bytes(kMagic, 6);
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return bytes;
}

}  // namespace pstrain::inference
