#pragma once
// NumPy's .npy format (version 1.0 and 2.0 headers, C order), enough for predict's inputs and outputs. Debian
// has no C++ library for it; the format is a magic string, a header length, a Python dict literal and the raw
// array (numpy.lib.format).
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pstrain::inference {

struct NpyArray {
  std::vector<std::size_t> shape;
  std::vector<float> values;  // converted from the file's type (float32/64, int8..64, uint8..64), row-major
};

// Throws Error(kInputData) naming the file for anything it cannot read: not .npy, Fortran order, big-endian,
// a type other than numbers, a size that does not match the shape.
NpyArray read_npy(const std::filesystem::path& path);

// The bytes of a little-endian float32 .npy file of `shape` holding `values`.
std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<float>& values);

}  // namespace pstrain::inference
