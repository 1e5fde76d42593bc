#include "inference/npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "core/error.h"

namespace pstrain::inference {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

template <typename T>
void convert(const std::string& raw, std::vector<float>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    T value;
    std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<float>(value);
  }
}

// Element size in bytes for a little-endian (or byte-sized) numeric descr; 0 when unsupported.
std::size_t element_size(const std::string& descr) {
  static const std::regex number("[<|]([fiu])([1248])");
  std::smatch match;
  if (!std::regex_match(descr, match, number)) return 0;
  if (match[1] == "f" && (match[2] == "1" || match[2] == "2")) return 0;
  return static_cast<std::size_t>(std::stoul(match[2]));
}

}  // namespace

NpyArray read_npy(const std::filesystem::path& path) {
  const auto fail = [&](const std::string& why) -> NpyArray {
    throw Error(ExitCode::kInputData, cat(path.string(), ": ", why));
  };
  std::ifstream file(path, std::ios::binary);
  if (!file) return fail("cannot be read");
  std::ostringstream content;
  content << file.rdbuf();
  const std::string bytes = content.str();
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) return fail("is not a .npy file");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length = 0;
  std::size_t header_start = 0;
  if (major == 1) {
    header_length =
        static_cast<unsigned char>(bytes[8]) | static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return fail("is truncated");
    for (int i = 3; i >= 0; --i) header_length = header_length << 8 | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    return fail(cat("has .npy format version ", static_cast<int>(major), ", expected 1, 2 or 3"));
  }
  if (header_start + header_length > bytes.size()) return fail("is truncated (header)");
  const std::string header = bytes.substr(header_start, header_length);
  std::smatch match;
  if (!std::regex_search(header, match, std::regex("'descr':\\s*'([^']*)'"))) return fail("has no 'descr'");
  const std::string descr = match[1];
  if (std::regex_search(header, std::regex("'fortran_order':\\s*True"))) {
    return fail("is in Fortran order; save it in C order (numpy.ascontiguousarray)");
  }
  if (!std::regex_search(header, match, std::regex("'shape':\\s*\\(([^)]*)\\)"))) return fail("has no 'shape'");
  NpyArray array;
  std::istringstream extents(match[1].str());
  for (std::string extent; std::getline(extents, extent, ',');) {
    if (extent.find_first_not_of(" ") == std::string::npos) continue;
    array.shape.push_back(std::stoul(extent));
  }
  const std::size_t size = element_size(descr);
  if (size == 0) return fail(cat("holds '", descr, "' elements; expected little-endian numbers"));
  std::size_t count = 1;
  for (const std::size_t extent : array.shape) count *= extent;
  const std::string raw = bytes.substr(header_start + header_length);
  if (raw.size() != count * size) {
    return fail(cat("holds ", raw.size(), " bytes of data; its shape needs ", count * size));
  }
  array.values.resize(count);
  const char kind = descr[1];
  if (kind == 'f') size == 4 ? convert<float>(raw, array.values) : convert<double>(raw, array.values);
  if (kind == 'i') {
    if (size == 1) convert<std::int8_t>(raw, array.values);
    if (size == 2) convert<std::int16_t>(raw, array.values);
    if (size == 4) convert<std::int32_t>(raw, array.values);
    if (size == 8) convert<std::int64_t>(raw, array.values);
  }
  if (kind == 'u') {
    if (size == 1) convert<std::uint8_t>(raw, array.values);
    if (size == 2) convert<std::uint16_t>(raw, array.values);
    if (size == 4) convert<std::uint32_t>(raw, array.values);
    if (size == 8) convert<std::uint64_t>(raw, array.values);
  }
  return array;
}

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
