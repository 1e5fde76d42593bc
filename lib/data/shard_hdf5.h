#pragma once
// Internal to the data layer: the names and versions of a shard file's HDF5 layout, which the shard readers and
// writers share (HDF5 itself, its lock and its messages: hdf5/library.h). Not included by anything outside lib/data.
#include <cstdint>

#include "hdf5/library.h"

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

// The library's lock and messages, named here as the data layer has always called them (hdf5::lock()).
using pstrain::hdf5::describe;
using pstrain::hdf5::lock;

}  // namespace pstrain::data::hdf5
