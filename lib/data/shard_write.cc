#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/files.h"
#include "data/shard.h"
#include "data/shard_hdf5.h"

namespace pstrain::data {

namespace {

namespace fs = std::filesystem;

// Deletes the half-written temporary file unless the rename went through, so a failed write leaves the
// folder as it was.
class TempFile {
 public:
  explicit TempFile(fs::path path) : path_(std::move(path)) {}
  ~TempFile() {
    if (!committed_) {
      std::error_code ignored;
      fs::remove(path_, ignored);
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const fs::path& path() const { return path_; }
  void commit() { committed_ = true; }

 private:
  fs::path path_;
  bool committed_ = false;
};

// Fixed-length, as checkpoints write theirs: a variable-length string lives in HDF5's global heap, whose reader
// in HDF5 1.10.8 overflows or loops for ever on a damaged file (fuzz_shard: 12 of its 16 crashes and all 16 hangs
// in a 10-minute run; tests/fuzz/known-hdf5). Readers still accept the variable-length strings of older shards.
void write_string(H5::H5Object& target, const char* name, const std::string& value) {
  H5::StrType type(H5::PredType::C_S1, std::max<std::size_t>(value.size(), 1));
  type.setCset(H5T_CSET_UTF8);
  H5::Attribute attribute = target.createAttribute(name, type, H5::DataSpace(H5S_SCALAR));
  attribute.write(type, value);
}

template <typename T>
void write_scalar(H5::H5Object& target, const char* name, const H5::PredType& file_type,
                  const H5::PredType& memory_type, T value) {
  H5::Attribute attribute = target.createAttribute(name, file_type, H5::DataSpace(H5S_SCALAR));
  attribute.write(memory_type, &value);
}

void write_token_attributes(H5::H5File& file, const TokenMeta& tokens) {
  const auto u32 = [&](const char* name, std::uint32_t value) {
    write_scalar(file, name, H5::PredType::STD_U32LE, H5::PredType::NATIVE_UINT32, value);
  };
  u32(hdf5::kAttrVocabSize, tokens.vocab_size);
  u32(hdf5::kAttrNgram, tokens.ngram);
  u32(hdf5::kAttrVocabCrc32, tokens.vocab_crc32);
  write_string(file, hdf5::kAttrCorpus, tokens.corpus);
  write_string(file, hdf5::kAttrSplit, tokens.split);
  write_string(file, hdf5::kAttrVocabRule, tokens.vocab_rule);
  write_string(file, hdf5::kAttrWindows, tokens.windows);
}

// Token ids go to the file as int32, the type they are; Samples carries them as the floats the model reads.
std::vector<std::int32_t> token_ids(const std::vector<float>& features) {
  std::vector<std::int32_t> ids(features.size());
  for (std::size_t i = 0; i < features.size(); ++i) {
    PSTRAIN_ASSERT(features[i] >= 0 && features[i] < static_cast<float>(kMaxVocabularySize) &&
                       std::floor(features[i]) == features[i],
                   "token id ", features[i], " at feature ", i, " is not an id");
    ids[i] = static_cast<std::int32_t>(features[i]);
  }
  return ids;
}

void write_contents(H5::H5File& file, const Samples& samples) {
  const ShardMeta& meta = samples.meta;
  write_string(file, hdf5::kAttrDataset, meta.dataset);
  {
    const hsize_t rank[1] = {meta.sample_shape.size()};
    H5::Attribute shape = file.createAttribute(hdf5::kAttrSampleShape, H5::PredType::STD_U64LE, H5::DataSpace(1, rank));
    shape.write(H5::PredType::NATIVE_UINT64, meta.sample_shape.data());
  }
  write_scalar(file, hdf5::kAttrNumClasses, H5::PredType::STD_U32LE, H5::PredType::NATIVE_UINT32, meta.num_classes);
  write_scalar(file, hdf5::kAttrSampleCount, H5::PredType::STD_U64LE, H5::PredType::NATIVE_UINT64, meta.sample_count);
  write_string(file, hdf5::kAttrSource, meta.source);
  write_scalar(file, hdf5::kAttrFormatVersion, H5::PredType::STD_U32LE, H5::PredType::NATIVE_UINT32,
               hdf5::kFormatVersion);
  if (meta.tokens) write_token_attributes(file, *meta.tokens);

  // Contiguous layout, no compression: shards are read whole at start-up, and raw values read fastest.
  const hsize_t feature_dims[2] = {meta.sample_count, meta.sample_size()};
  const H5::PredType& feature_type = meta.tokens ? H5::PredType::STD_I32LE : H5::PredType::IEEE_F32LE;
  H5::DataSet features = file.createDataSet(hdf5::kFeatures, feature_type, H5::DataSpace(2, feature_dims));
  const hsize_t label_dims[1] = {meta.sample_count};
  H5::DataSet labels = file.createDataSet(hdf5::kLabels, H5::PredType::STD_I32LE, H5::DataSpace(1, label_dims));
  if (meta.sample_count > 0) {  // HDF5 rejects a null buffer even for zero elements
    if (meta.tokens) {
      features.write(token_ids(samples.features).data(), H5::PredType::NATIVE_INT32);
    } else {
      features.write(samples.features.data(), H5::PredType::NATIVE_FLOAT);
    }
    labels.write(samples.labels.data(), H5::PredType::NATIVE_INT32);
  }
}

}  // namespace

void write_shard(const fs::path& path, const Samples& samples) {
  const ShardMeta& meta = samples.meta;
  // The writer only ever receives samples built by pstrain itself, so inconsistent sizes are bugs (and would
  // make HDF5 read past the end of the vectors).
  PSTRAIN_ASSERT(samples.labels.size() == meta.sample_count, samples.labels.size(), " labels for sample_count ",
                 meta.sample_count);
  PSTRAIN_ASSERT(samples.features.size() == meta.sample_count * meta.sample_size(), samples.features.size(),
                 " feature values for ", meta.sample_count, " samples of size ", meta.sample_size());
  PSTRAIN_ASSERT(!meta.sample_shape.empty() && meta.num_classes > 0, "incomplete shard metadata");
  // Label values are stored as given: range checks belong to the readers, and test tools deliberately write
  // out-of-range labels to exercise them.

  // Same folder as the target, so the rename is atomic; the pid keeps concurrent writers apart.
  TempFile temp(fs::path(path.string() + ".tmp-" + std::to_string(::getpid())));
  {
    auto lock = hdf5::lock();
    try {
      H5::H5File file(temp.path().string(), H5F_ACC_TRUNC);
      write_contents(file, samples);
      file.close();
    } catch (const H5::Exception& error) {
      throw Error(ExitCode::kOutput, cat("cannot write ", path.string(), ": ", hdf5::describe(error)));
    }
  }
  fsync_path(temp.path());
  std::error_code ec;
  fs::rename(temp.path(), path, ec);
  if (ec) throw Error(ExitCode::kOutput, cat("cannot write ", path.string(), ": rename: ", ec.message()));
  temp.commit();
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  fsync_path(folder);
}

}  // namespace pstrain::data
