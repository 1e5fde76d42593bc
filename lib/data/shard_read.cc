// Reading shards back. HDF5 parsers have a history of memory-safety bugs on malformed files, so every
// shape and type is checked before any data is read into a buffer sized from the file's own claims.
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "core/error.h"
#include "data/ctr/ctr_shard.h"
#include "data/shard.h"
#include "data/shard_hdf5.h"

namespace pstrain::data {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxSampleRank = 8;
constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 40;  // far beyond any shard, far below overflow

[[noreturn]] void bad(const fs::path& path, const std::string& problem) {
  throw Error(ExitCode::kInputData, cat(path.string(), ": ", problem));
}

std::string type_name(const H5::DataType& type) {
  switch (type.getClass()) {
    case H5T_INTEGER: return cat(type.getSize() * 8, "-bit integer");
    case H5T_FLOAT: return cat(type.getSize() * 8, "-bit float");
    case H5T_STRING: return "string";
    default: return "a non-numeric type";
  }
}

H5::Attribute open_attribute(const H5::H5File& file, const fs::path& path, const char* name) {
  if (!file.attrExists(name)) bad(path, cat("missing attribute '", name, "' (not a pstrain shard?)"));
  return file.openAttribute(name);
}

// Number of elements of a scalar or 1-D attribute; anything of higher rank is rejected.
hssize_t attribute_length(const H5::Attribute& attribute, const fs::path& path, const char* name) {
  const H5::DataSpace space = attribute.getSpace();
  if (space.getSimpleExtentType() == H5S_SCALAR) return 1;
  if (space.getSimpleExtentType() != H5S_SIMPLE || space.getSimpleExtentNdims() != 1) {
    bad(path, cat("attribute '", name, "' must be a scalar or a 1-D array"));
  }
  return space.getSimpleExtentNpoints();
}

// A variable-length string (h5py's default for a str) sends HDF5 1.10.8 into its global heap, whose reader
// overflows or loops for ever on a damaged file (tests/fuzz/known-hdf5): read only where the file's bytes are known
// to be intact, checked against its folder's MANIFEST (`checksummed`), and in version 1 shards, written before
// pstrain-data switched to fixed-length strings. Otherwise refused from its datatype alone, before HDF5 reads it.
std::string read_string(const H5::H5File& file, const fs::path& path, const char* name, std::uint32_t version,
                        bool checksummed) {
  const H5::Attribute attribute = open_attribute(file, path, name);
  if (attribute.getTypeClass() != H5T_STRING) {
    bad(path, cat("attribute '", name, "' is ", type_name(attribute.getDataType()), ", expected a string"));
  }
  if (attribute_length(attribute, path, name) != 1) bad(path, cat("attribute '", name, "' must hold one string"));
  if (version >= hdf5::kFixedLengthStringsSince && !checksummed && attribute.getStrType().isVariableStr()) {
    bad(path, cat("attribute '", name,
                  "' is a variable-length string (h5py's default), which pstrain reads only from a folder with a "
                  "MANIFEST, since HDF5 1.10 can hang on a damaged one: run `pstrain-data manifest --output ",
                  path.parent_path().empty() ? "." : path.parent_path().string(),
                  "` once the folder is written (or store fixed-length strings: numpy.bytes_)"));
  }
  std::string value;
  attribute.read(attribute.getStrType(), value);
  return value;
}

// Integer attributes of any width up to 64 bits, signed or unsigned (pstrain-data writes uint32 and uint64, h5py
// int64), each value checked to be >= 0 and to fit T. Floats, strings and wider types are someone else's file.
template <typename T>
std::vector<T> read_whole_numbers(const H5::Attribute& attribute, const fs::path& path, const char* name,
                                  hssize_t length) {
  const bool integer = attribute.getTypeClass() == H5T_INTEGER;
  if (!integer || attribute.getIntType().getSize() > 8) {
    bad(path, cat("attribute '", name, "' is ", type_name(attribute.getDataType()), ", expected a whole number"));
  }
  const auto count = static_cast<std::size_t>(length);
  std::vector<T> values(count);
  const auto out_of_range = [&](auto value) {
    bad(path, cat("attribute '", name, "' holds ", value, ", expected 0 to ", std::numeric_limits<T>::max()));
  };
  if (attribute.getIntType().getSign() == H5T_SGN_NONE) {
    std::vector<std::uint64_t> raw(count);
    attribute.read(H5::PredType::NATIVE_UINT64, raw.data());
    for (std::size_t i = 0; i < count; ++i) {
      if (raw[i] > std::numeric_limits<T>::max()) out_of_range(raw[i]);
      values[i] = static_cast<T>(raw[i]);
    }
  } else {
    std::vector<std::int64_t> raw(count);
    attribute.read(H5::PredType::NATIVE_INT64, raw.data());
    for (std::size_t i = 0; i < count; ++i) {
      if (raw[i] < 0 || static_cast<std::uint64_t>(raw[i]) > std::numeric_limits<T>::max()) out_of_range(raw[i]);
      values[i] = static_cast<T>(raw[i]);
    }
  }
  return values;
}

template <typename T>
T read_unsigned(const H5::H5File& file, const fs::path& path, const char* name) {
  const H5::Attribute attribute = open_attribute(file, path, name);
  const hssize_t length = attribute_length(attribute, path, name);
  if (length != 1) bad(path, cat("attribute '", name, "' must be a single value"));
  return read_whole_numbers<T>(attribute, path, name, length)[0];
}

std::vector<std::uint64_t> read_shape(const H5::H5File& file, const fs::path& path) {
  const char* name = hdf5::kAttrSampleShape;
  const H5::Attribute attribute = open_attribute(file, path, name);
  const hssize_t length = attribute_length(attribute, path, name);
  if (length < 1 || static_cast<std::size_t>(length) > kMaxSampleRank) {
    bad(path, cat("attribute '", name, "' has ", length, " dimensions, expected 1 to ", kMaxSampleRank));
  }
  std::vector<std::uint64_t> shape = read_whole_numbers<std::uint64_t>(attribute, path, name, length);
  std::uint64_t size = 1;
  for (const std::uint64_t dim : shape) {
    if (dim == 0 || size > kMaxElements / dim) bad(path, cat("attribute '", name, "' holds an impossible shape"));
    size *= dim;
  }
  return shape;
}

// Opens a dataset after checking that the name exists and really is a dataset (not a group or a link).
H5::DataSet open_dataset(const H5::H5File& file, const fs::path& path, const char* name) {
  if (H5Lexists(file.getId(), name, H5P_DEFAULT) <= 0 || file.childObjType(name) != H5O_TYPE_DATASET) {
    bad(path, cat("missing dataset '/", name, "'"));
  }
  return file.openDataSet(name);
}

// Deflate, the strongest filter HDF5 ships for float data, expands at most ~1032 times; anything claiming more
// is refused before pstrain allocates for it (pstrain-data itself writes shards uncompressed).
constexpr std::uint64_t kMaxCompressionRatio = 1032;

// Checks rank and dimensions; also that an uncompressed dataset really has storage for all of its elements, within
// the file, so that a file claiming millions of samples without the bytes for them fails here, not in a read or in
// an allocation of gigabytes. A compressed dataset may not claim more than the file could decompress to.
void check_extent(const H5::DataSet& dataset, const fs::path& path, const char* name,
                  const std::vector<hsize_t>& expected, std::uint64_t file_bytes) {
  const H5::DataSpace space = dataset.getSpace();
  const int rank = space.getSimpleExtentNdims();
  if (rank != static_cast<int>(expected.size())) {
    bad(path, cat("dataset '/", name, "' has ", rank, " dimensions, expected ", expected.size()));
  }
  std::vector<hsize_t> dims(expected.size());
  space.getSimpleExtentDims(dims.data());
  if (dims != expected) {
    std::string got, want;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      got += cat(i ? ", " : "", dims[i]);
      want += cat(i ? ", " : "", expected[i]);
    }
    bad(path, cat("dataset '/", name, "' has shape [", got, "] but the attributes say [", want, "]"));
  }
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(space.getSimpleExtentNpoints()) * dataset.getDataType().getSize();
  if (dataset.getCreatePlist().getNfilters() == 0) {
    if (dataset.getStorageSize() != bytes || bytes > file_bytes) {
      bad(path, cat("dataset '/", name, "' stores ", dataset.getStorageSize(), " bytes, expected ", bytes,
                    " in a file of ", file_bytes, " bytes (incomplete or damaged file)"));
    }
  } else if (bytes / kMaxCompressionRatio > file_bytes) {
    bad(path, cat("dataset '/", name, "' is compressed and claims ", bytes, " bytes, more than a file of ", file_bytes,
                  " bytes can hold (damaged file)"));
  }
}

// The attributes of a token shard, checked against each other and the sample shape (N-1 context ids).
TokenMeta read_token_meta(const H5::H5File& file, const fs::path& path, const ShardMeta& meta, bool checksummed) {
  TokenMeta tokens;
  const auto u32 = [&](const char* name) { return read_unsigned<std::uint32_t>(file, path, name); };
  tokens.vocab_size = u32(hdf5::kAttrVocabSize);
  tokens.ngram = u32(hdf5::kAttrNgram);
  tokens.vocab_crc32 = u32(hdf5::kAttrVocabCrc32);
  tokens.corpus = read_string(file, path, hdf5::kAttrCorpus, meta.format_version, checksummed);
  tokens.split = read_string(file, path, hdf5::kAttrSplit, meta.format_version, checksummed);
  tokens.vocab_rule = read_string(file, path, hdf5::kAttrVocabRule, meta.format_version, checksummed);
  tokens.windows = read_string(file, path, hdf5::kAttrWindows, meta.format_version, checksummed);
  if (tokens.vocab_size == 0 || tokens.vocab_size > kMaxVocabularySize) {
    bad(path, cat("attribute 'vocab_size' is ", tokens.vocab_size, ", expected 1 to ", kMaxVocabularySize));
  }
  if (tokens.ngram < 2) bad(path, cat("attribute 'ngram' is ", tokens.ngram, ", expected at least 2"));
  if (meta.sample_shape != std::vector<std::uint64_t>{tokens.ngram - 1}) {
    bad(path, cat("attribute 'sample_shape' does not hold the ", tokens.ngram - 1, " context ids of ", tokens.ngram,
                  "-gram windows"));
  }
  return tokens;
}

struct OpenShard {
  H5::H5File file;
  ShardMeta meta;
  H5::DataSet features;
  H5::DataSet labels;
};

// Opens the file and checks attributes and dataset shapes and types against each other.
// `checksummed`: the file matched its folder's MANIFEST (read_string). `access`: how HDF5 reads the file
// (ShardRows: no sieve buffer).
OpenShard open_shard(const fs::path& path, bool checksummed,
                     const H5::FileAccPropList& access = H5::FileAccPropList::DEFAULT) {
  std::error_code ec;
  if (!fs::exists(path, ec)) bad(path, "file does not exist");
  if (!fs::is_regular_file(path, ec)) bad(path, "not a regular file");
  if (!H5::H5File::isHdf5(path.string())) bad(path, "not an HDF5 file (no HDF5 signature)");

  const std::uint64_t file_bytes = fs::file_size(path, ec);
  if (ec) bad(path, cat("cannot read its size: ", ec.message()));

  OpenShard shard;
  shard.file.openFile(path.string(), H5F_ACC_RDONLY, access);
  if (shard.file.attrExists("ctr_format_version")) {  // data/ctr/ctr_shard.h
    bad(path,
        "is a CTR shard (dense features and bags of categorical ids, pstrain-data criteo | movielens | "
        "synthetic-ctr): read it with data::ctr::CtrShardRows");
  }
  const auto version = read_unsigned<std::uint32_t>(shard.file, path, hdf5::kAttrFormatVersion);
  if (version < hdf5::kOldestReadableVersion || version > hdf5::kFormatVersion) {
    bad(path,
        cat("unsupported format_version ", version, " (this pstrain reads versions ", hdf5::kOldestReadableVersion,
            " to ", hdf5::kFormatVersion, "; convert the data again with this pstrain-data)"));
  }
  ShardMeta& meta = shard.meta;
  meta.format_version = version;
  meta.dataset = read_string(shard.file, path, hdf5::kAttrDataset, version, checksummed);
  meta.source = read_string(shard.file, path, hdf5::kAttrSource, version, checksummed);
  meta.sample_shape = read_shape(shard.file, path);
  meta.num_classes = read_unsigned<std::uint32_t>(shard.file, path, hdf5::kAttrNumClasses);
  meta.sample_count = read_unsigned<std::uint64_t>(shard.file, path, hdf5::kAttrSampleCount);
  if (meta.num_classes == 0) bad(path, "attribute 'num_classes' is 0");
  if (meta.sample_count > kMaxElements / meta.sample_size()) bad(path, "attribute 'sample_count' is impossibly large");

  if (shard.file.attrExists(hdf5::kAttrVocabSize)) meta.tokens = read_token_meta(shard.file, path, meta, checksummed);

  shard.features = open_dataset(shard.file, path, hdf5::kFeatures);
  const H5::DataType feature_type = shard.features.getDataType();
  if (meta.tokens) {
    if (feature_type.getClass() != H5T_INTEGER || feature_type.getSize() != 4 ||
        shard.features.getIntType().getSign() != H5T_SGN_2) {
      bad(path, cat("dataset '/features' is ", type_name(feature_type), ", expected signed 32-bit token ids"));
    }
  } else if (feature_type.getClass() != H5T_FLOAT || feature_type.getSize() != 4) {
    bad(path, cat("dataset '/features' is ", type_name(feature_type), ", expected 32-bit float"));
  }
  check_extent(shard.features, path, hdf5::kFeatures, {meta.sample_count, meta.sample_size()}, file_bytes);

  shard.labels = open_dataset(shard.file, path, hdf5::kLabels);
  const H5::DataType label_type = shard.labels.getDataType();
  if (label_type.getClass() != H5T_INTEGER || label_type.getSize() != 4 ||
      shard.labels.getIntType().getSign() != H5T_SGN_2) {
    bad(path, cat("dataset '/labels' is ", type_name(label_type), ", expected signed 32-bit integer"));
  }
  check_extent(shard.labels, path, hdf5::kLabels, {meta.sample_count}, file_bytes);
  return shard;
}

// Runs `body` under the HDF5 lock and turns HDF5's exceptions into Error(kInputData) naming the file.
template <typename Body>
auto with_hdf5(const fs::path& path, Body body) {
  auto lock = hdf5::lock();
  try {
    return body();
  } catch (const H5::Exception& error) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": cannot read shard: ", hdf5::describe(error)));
  }
}

// Whether `path` is a CTR shard (data/ctr/ctr_shard.h: read through ctr::CtrShardRows). Anything that is not a
// readable HDF5 file is not, and open_shard names what is wrong with it. Call after the MANIFEST check.
bool is_ctr_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  return with_hdf5(path, [&] {
    if (!H5::H5File::isHdf5(path.string())) return false;
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    return file.attrExists("ctr_format_version");
  });
}

// Rows (increasing) of a CTR shard, as runs of consecutive ones: CtrShardRows reads ranges.
Samples read_ctr_rows(const ctr::CtrShardRows& shard, std::span<const std::uint64_t> rows) {
  Samples samples = ctr::samples_of(shard.read(0, 0), shard.meta());
  for (std::size_t begin = 0; begin < rows.size();) {
    std::size_t end = begin + 1;
    while (end < rows.size() && rows[end] == rows[end - 1] + 1) ++end;
    Samples run = ctr::samples_of(shard.read(rows[begin], end - begin), shard.meta());
    samples.features.insert(samples.features.end(), run.features.begin(), run.features.end());
    samples.labels.insert(samples.labels.end(), run.labels.begin(), run.labels.end());
    core::append_samples(samples.categorical, run.categorical);
    begin = end;
  }
  samples.meta.sample_count = rows.size();
  return samples;
}

void check_labels(const fs::path& path, const Samples& samples) {
  for (std::size_t i = 0; i < samples.labels.size(); ++i) {
    const std::int32_t label = samples.labels[i];
    if (label < 0 || static_cast<std::uint32_t>(label) >= samples.meta.num_classes) {
      bad(path, cat("label ", label, " of sample ", i, " is out of range [0, ", samples.meta.num_classes, ")"));
    }
  }
}

void check_finite(const fs::path& path, const Samples& samples) {
  const std::size_t size = samples.meta.sample_size();
  for (std::size_t i = 0; i < samples.features.size(); ++i) {
    if (!std::isfinite(samples.features[i])) {
      bad(path, cat("feature ", i % size, " of sample ", i / size, " is not finite (", samples.features[i], ")"));
    }
  }
}

// The ids of a token shard (of `samples` samples: all, or those `file_space` selects), checked against the
// vocabulary, as the floats the embedding layer reads.
std::vector<float> read_token_ids(const fs::path& path, const OpenShard& shard, std::uint64_t samples,
                                  const H5::DataSpace& memory_space = H5::DataSpace::ALL,
                                  const H5::DataSpace& file_space = H5::DataSpace::ALL) {
  const std::size_t size = shard.meta.sample_size();
  std::vector<std::int32_t> ids(samples * size);
  if (!ids.empty()) shard.features.read(ids.data(), H5::PredType::NATIVE_INT32, memory_space, file_space);
  const std::uint32_t vocab = shard.meta.tokens->vocab_size;
  std::vector<float> features(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || static_cast<std::uint32_t>(ids[i]) >= vocab) {
      bad(path, cat("token id ", ids[i], " (context word ", i % size, " of sample ", i / size,
                    ") is outside the vocabulary of ", vocab, " words"));
    }
    features[i] = static_cast<float>(ids[i]);
  }
  return features;
}

}  // namespace

ShardMeta read_shard_meta(const fs::path& path) {
  const bool checksummed = check_shard_against_manifest(path);  // before HDF5 sees the file, and outside its lock
  if (is_ctr_file(path)) return ctr::shard_meta_of(ctr::read_ctr_shard_meta(path));
  return with_hdf5(path, [&] { return open_shard(path, checksummed).meta; });
}

Samples read_shard(const fs::path& path) {
  const bool checksummed = check_shard_against_manifest(path);
  if (is_ctr_file(path)) {
    const ctr::CtrShardRows shard(path);
    return ctr::samples_of(shard.read(0, shard.meta().sample_count), shard.meta());
  }
  return with_hdf5(path, [&] {
    OpenShard shard = open_shard(path, checksummed);
    Samples samples;
    samples.meta = shard.meta;
    samples.labels.resize(shard.meta.sample_count);
    if (shard.meta.sample_count > 0) shard.labels.read(samples.labels.data(), H5::PredType::NATIVE_INT32);
    check_labels(path, samples);
    if (shard.meta.tokens) {
      samples.features = read_token_ids(path, shard, shard.meta.sample_count);
    } else {
      samples.features.resize(shard.meta.sample_count * shard.meta.sample_size());
      if (shard.meta.sample_count > 0) shard.features.read(samples.features.data(), H5::PredType::NATIVE_FLOAT);
      check_finite(path, samples);
    }
    return samples;
  });
}

struct ShardRows::Open {
  OpenShard shard;
  std::unique_ptr<ctr::CtrShardRows> ctr;  // a CTR shard: read through it (shard.meta is its ShardMeta)
};

ShardRows::ShardRows(const fs::path& path) : path_(path) {
  const bool checksummed = check_shard_against_manifest(path);
  if (is_ctr_file(path)) {
    open_ = std::make_unique<Open>();
    open_->ctr = std::make_unique<ctr::CtrShardRows>(path);
    open_->shard.meta = ctr::shard_meta_of(open_->ctr->meta());
    return;
  }
  open_ = with_hdf5(path, [&] {
    // A few scattered rows at a time: HDF5's sieve buffer (64 KiB by default) would read 64 KiB around every row.
    H5::FileAccPropList access;
    access.setSieveBufSize(0);
    return std::make_unique<Open>(Open{open_shard(path, checksummed, access), nullptr});
  });
}

ShardRows::~ShardRows() {
  if (!open_) return;
  open_->ctr.reset();        // takes the HDF5 lock itself
  auto lock = hdf5::lock();  // HDF5 objects are closed under the library's lock, as they were opened
  open_.reset();
}

ShardRows::ShardRows(ShardRows&&) noexcept = default;

const ShardMeta& ShardRows::meta() const {
  return open_->shard.meta;
}

Samples ShardRows::read(std::span<const std::uint64_t> rows) const {
  if (open_->ctr) return read_ctr_rows(*open_->ctr, rows);
  return with_hdf5(path_, [&] {
    const OpenShard& shard = open_->shard;
    Samples samples;
    samples.meta = shard.meta;
    samples.meta.sample_count = rows.size();
    if (rows.empty()) return samples;
    const hsize_t width = shard.meta.sample_size();
    // The rows as runs of consecutive ones, one hyperslab each: HDF5 reads a selection in the file's order.
    H5::DataSpace feature_space = shard.features.getSpace();
    H5::DataSpace label_space = shard.labels.getSpace();
    feature_space.selectNone();
    label_space.selectNone();
    for (std::size_t begin = 0; begin < rows.size();) {
      PSTRAIN_ASSERT(rows[begin] < shard.meta.sample_count && (begin == 0 || rows[begin] > rows[begin - 1]), "row ",
                     rows[begin], " of ", path_.string(), " (", shard.meta.sample_count, " samples, rows increasing)");
      std::size_t end = begin + 1;
      while (end < rows.size() && rows[end] == rows[end - 1] + 1 && rows[end] < shard.meta.sample_count) ++end;
      const hsize_t start[2] = {rows[begin], 0};
      const hsize_t count[2] = {end - begin, width};
      feature_space.selectHyperslab(H5S_SELECT_OR, count, start);
      label_space.selectHyperslab(H5S_SELECT_OR, count, start);
      begin = end;
    }
    const hsize_t memory_dims[2] = {rows.size(), width};
    const H5::DataSpace feature_memory(2, memory_dims);
    const H5::DataSpace label_memory(1, memory_dims);
    samples.labels.resize(rows.size());
    shard.labels.read(samples.labels.data(), H5::PredType::NATIVE_INT32, label_memory, label_space);
    check_labels(path_, samples);
    if (shard.meta.tokens) {
      samples.features = read_token_ids(path_, shard, rows.size(), feature_memory, feature_space);
    } else {
      samples.features.resize(rows.size() * width);
      shard.features.read(samples.features.data(), H5::PredType::NATIVE_FLOAT, feature_memory, feature_space);
      check_finite(path_, samples);
    }
    return samples;
  });
}

Samples read_shard_rows(const fs::path& path, std::span<const std::uint64_t> rows) {
  return ShardRows(path).read(rows);
}

}  // namespace pstrain::data
