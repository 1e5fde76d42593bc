#pragma once
// Reader for NumPy's .npy format (numpy.lib.format, versions 1.0 to 3.0): the magic "\x93NUMPY", a version, a
// little-endian header length, then a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (N, ...)}
// padded with spaces, then the raw elements. Written here rather than taken from a library: Debian 12 ships no C++
// reader for it except xtensor's xnpy.hpp, which needs the element type at compile time, brings xtensor's
// expression templates into the data layer, and reads no .npz; the format is one header of a few fields.
//
// Accepted: the element types users hold features and labels in (uint8, int32, int64, float32, float64, and as
// labels int8/int16/uint16/uint32 too), little-endian or byte-sized, C order. Anything else (big-endian, Fortran
// order, objects, structured arrays, strings) is refused with the NumPy call that makes an accepted array.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pstrain::data {

enum class NpyType { kUint8, kInt8, kUint16, kInt16, kUint32, kInt32, kInt64, kFloat32, kFloat64 };

struct NpyArray {
  NpyType type = NpyType::kFloat32;
  std::string descr;                 // as the header wrote it ("<f4"), for messages
  std::vector<std::uint64_t> shape;  // () for a scalar
  std::vector<std::uint8_t> data;    // element_count() * element_size() bytes, C order, little-endian

  std::uint64_t element_count() const;  // product of shape (1 for a scalar)
  std::size_t element_size() const;
};

// Parses the bytes of one .npy file; `name` is what messages call it (a path, or "archive.npz:x.npy"). Checks the
// magic, the header's syntax and fields, and that exactly element_count() * element_size() bytes follow (fewer:
// truncated; more: trailing garbage). Throws Error(kInputData) naming `name` and the problem.
NpyArray parse_npy(std::vector<std::uint8_t> bytes, const std::string& name);  // takes the bytes over: no copy
NpyArray read_npy(const std::filesystem::path& path);                          // the whole file, through parse_npy

// The features of samples, one per index of the first dimension, as float32: uint8 divided by 255 (images, into
// [0, 1] as the IDX and CIFAR readers do), float32 as stored, float64 rounded to float32. Refuses other types, a
// scalar, values that are not finite or do not fit a float32. Throws Error(kInputData) naming `name`.
std::vector<float> npy_features(const NpyArray& array, const std::string& name);
// Class labels: a 1-D array of integers in [0, 2^31). Throws Error(kInputData) naming `name`.
std::vector<std::int32_t> npy_labels(const NpyArray& array, const std::string& name);

}  // namespace pstrain::data
