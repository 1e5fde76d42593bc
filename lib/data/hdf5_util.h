#pragma once
// Internal to the data layer: what the shard reader and writer share about HDF5 itself.
// Not included by anything outside lib/data, so other layers never see H5Cpp.h.
#include <H5Cpp.h>

#include <mutex>
#include <string>

namespace pstrain::data::hdf5 {

// 2: string attributes are fixed-length. 1: variable-length (still read; version 2 files may not use them).
inline constexpr std::uint32_t kFormatVersion = 2;
inline constexpr std::uint32_t kOldestReadableVersion = 1;
inline constexpr std::uint32_t kFixedLengthStringsSince = 2;

// Names inside a shard file (the layout is documented in shard.h).
inline constexpr const char* kFeatures = "features";
inline constexpr const char* kLabels = "labels";
inline constexpr const char* kAttrDataset = "dataset";
inline constexpr const char* kAttrSampleShape = "sample_shape";
inline constexpr const char* kAttrNumClasses = "num_classes";
inline constexpr const char* kAttrSampleCount = "sample_count";
inline constexpr const char* kAttrSource = "source";
inline constexpr const char* kAttrFormatVersion = "format_version";
// Token shards only (TokenMeta).
inline constexpr const char* kAttrVocabSize = "vocab_size";
inline constexpr const char* kAttrNgram = "ngram";
inline constexpr const char* kAttrVocabCrc32 = "vocab_crc32";
inline constexpr const char* kAttrCorpus = "corpus";
inline constexpr const char* kAttrSplit = "split";
inline constexpr const char* kAttrVocabRule = "vocab_rule";
inline constexpr const char* kAttrWindows = "windows";

// Debian's libhdf5 is built without thread safety, so every use of the library goes through one lock.
// Taking it also turns off HDF5's habit of printing its error stack to stderr: we report errors ourselves.
std::unique_lock<std::mutex> lock();

// The most specific message on HDF5's error stack (e.g. "truncated file: eof = 1024, ...") followed by the
// API call that failed; falls back to the exception's own text. Call right after catching, before any
// other HDF5 call replaces the stack.
std::string describe(const H5::Exception& error);

}  // namespace pstrain::data::hdf5
