#pragma once
// predict's .npy outputs: NumPy's format (numpy.lib.format, version 1.0), float32, C order. Inputs are read by
// data/npy.h, the reader pstrain-data converts users' arrays with.
#include <cstddef>
#include <string>
#include <vector>

namespace pstrain::inference {

// The bytes of a little-endian float32 .npy file of `shape` holding `values`.
std::string npy_bytes(const std::vector<std::size_t>& shape, const std::vector<float>& values);

}  // namespace pstrain::inference
