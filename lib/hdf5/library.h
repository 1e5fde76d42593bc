#pragma once
// HDF5 itself, as every layer that reads or writes HDF5 files uses it (lib/data's shards, lib/checkpoint's
// checkpoints and pass folders): one lock around the library, and its error stack turned into one message.
#include <H5Cpp.h>

#include <mutex>
#include <string>

namespace pstrain::hdf5 {

// Debian's libhdf5 is built without thread safety, so every use of the library goes through one lock.
// Taking it also turns off HDF5's habit of printing its error stack to stderr: we report errors ourselves.
std::unique_lock<std::mutex> lock();

// The most specific message on HDF5's error stack (e.g. "truncated file: eof = 1024, ...") followed by the
// API call that failed; falls back to the exception's own text. Call right after catching, before any
// other HDF5 call replaces the stack.
std::string describe(const H5::Exception& error);

}  // namespace pstrain::hdf5
