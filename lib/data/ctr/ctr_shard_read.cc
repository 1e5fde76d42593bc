// Reading CTR shards back, a range of samples at a time. As in data/shard_read.cc, every attribute, shape, type
// and storage extent is checked before a buffer is sized from the file's claims, and every value read is checked
// before it leaves here (offsets above all: they index the ids).
#include <cmath>
#include <limits>

#include "core/error.h"
#include "data/ctr/ctr_hdf5.h"
#include "data/ctr/ctr_shard.h"
#include "data/shard.h"
#include "data/shard_hdf5.h"
#include "hdf5/dataset_storage.h"

namespace pstrain::data::ctr {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 40;
constexpr std::size_t kMaxFields = 4096;

[[noreturn]] void bad(const fs::path& path, const std::string& problem) {
  throw Error(ExitCode::kInputData, cat(path.string(), ": ", problem));
}

H5::Attribute attribute(const H5::H5File& file, const fs::path& path, const char* name) {
  if (!file.attrExists(name)) bad(path, cat("missing attribute '", name, "' (not a CTR shard?)"));
  return file.openAttribute(name);
}

// Fixed-length strings only (what pstrain-data writes): HDF5 1.10 can hang on a damaged variable-length one.
std::string read_string(const H5::H5File& file, const fs::path& path, const char* name) {
  const H5::Attribute attr = attribute(file, path, name);
  if (attr.getTypeClass() != H5T_STRING || attr.getStrType().isVariableStr() ||
      attr.getSpace().getSimpleExtentType() != H5S_SCALAR) {
    bad(path, cat("attribute '", name, "' is not a fixed-length string"));
  }
  std::string value;
  attr.read(attr.getStrType(), value);
  return value;
}

std::vector<std::uint64_t> read_u64s(const H5::H5File& file, const fs::path& path, const char* name,
                                     std::size_t expected) {
  const H5::Attribute attr = attribute(file, path, name);
  const H5::DataSpace space = attr.getSpace();
  const auto points = static_cast<std::size_t>(space.getSimpleExtentNpoints());
  if (attr.getTypeClass() != H5T_INTEGER || attr.getIntType().getSign() != H5T_SGN_NONE ||
      attr.getIntType().getSize() > 8 || points != expected) {
    bad(path, cat("attribute '", name, "' must hold ", expected, " unsigned integer(s)"));
  }
  std::vector<std::uint64_t> values(expected);
  if (expected > 0) attr.read(H5::PredType::NATIVE_UINT64, values.data());
  return values;
}

// Opens `name` after checking it is a dataset of `expected` dimensions and element class and size, stored whole
// inside the file.
H5::DataSet open_checked(const H5::H5File& file, const fs::path& path, const std::string& name,
                         const std::vector<hsize_t>& expected, H5T_class_t type_class, std::size_t type_size) {
  if (H5Lexists(file.getId(), name.c_str(), H5P_DEFAULT) <= 0 || file.childObjType(name) != H5O_TYPE_DATASET) {
    bad(path, cat("missing dataset '/", name, "'"));
  }
  H5::DataSet dataset = file.openDataSet(name);
  const H5::DataType type = dataset.getDataType();
  if (type.getClass() != type_class || type.getSize() != type_size) {
    bad(path, cat("dataset '/", name, "' has the wrong element type"));
  }
  const H5::DataSpace space = dataset.getSpace();
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(space.getSimpleExtentNdims(), 0)));
  space.getSimpleExtentDims(dims.data());
  if (dims != expected) bad(path, cat("dataset '/", name, "' does not have the shape its attributes say"));
  hsize_t elements = 1;
  for (const hsize_t dim : dims) elements *= dim;
  ::pstrain::hdf5::check_dataset_storage(dataset, path.string(), name, elements * type_size);
  return dataset;
}

struct Field {
  H5::DataSet values, offsets;
  std::uint64_t ids = 0;
};

struct OpenFile {
  H5::H5File file;
  CtrMeta meta;
  H5::DataSet dense, labels;
  std::vector<Field> fields;
};

void open_datasets(const fs::path& path, OpenFile& open) {
  const CtrMeta& meta = open.meta;
  const hsize_t n = meta.sample_count;
  open.dense = open_checked(open.file, path, names::kDense, {n, meta.layout.dense_names.size()}, H5T_FLOAT, 4);
  open.labels = open_checked(open.file, path, names::kLabels, {n}, H5T_INTEGER, 4);
  for (const std::string& name : meta.layout.field_names) {
    const std::string values_name = names::ids_path(name, names::kValues);
    if (H5Lexists(open.file.getId(), names::kIds, H5P_DEFAULT) <= 0 ||
        H5Lexists(open.file.getId(), (std::string(names::kIds) + "/" + name).c_str(), H5P_DEFAULT) <= 0 ||
        H5Lexists(open.file.getId(), values_name.c_str(), H5P_DEFAULT) <= 0) {
      bad(path, cat("missing dataset '/", values_name, "'"));
    }
    H5::DataSet probe = open.file.openDataSet(values_name);
    const hssize_t ids = probe.getSpace().getSimpleExtentNpoints();
    if (ids < 0 || static_cast<std::uint64_t>(ids) > kMaxElements) bad(path, cat("'/", values_name, "' is too big"));
    Field field;
    field.ids = static_cast<std::uint64_t>(ids);
    field.values = open_checked(open.file, path, values_name, {field.ids}, H5T_INTEGER, 8);
    field.offsets = open_checked(open.file, path, names::ids_path(name, names::kOffsets), {n + 1}, H5T_INTEGER, 8);
    open.fields.push_back(std::move(field));
  }
}

std::unique_ptr<OpenFile> open_shard(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) bad(path, "file does not exist");
  if (!H5::H5File::isHdf5(path.string())) bad(path, "not an HDF5 file (no HDF5 signature)");
  auto open = std::make_unique<OpenFile>();
  H5::FileAccPropList access;
  access.setSieveBufSize(0);  // ranges of a few samples: no 64 KiB read around each
  open->file.openFile(path.string(), H5F_ACC_RDONLY, access);
  const std::uint64_t version = read_u64s(open->file, path, names::kAttrVersion, 1)[0];
  if (version != kCtrFormatVersion) {
    bad(path, cat("unsupported ctr_format_version ", version, " (this pstrain reads ", kCtrFormatVersion, ")"));
  }
  CtrMeta& meta = open->meta;
  meta.layout.dataset = read_string(open->file, path, names::kAttrDataset);
  meta.source = read_string(open->file, path, names::kAttrSource);
  meta.layout.dense_names = names::split_names(read_string(open->file, path, names::kAttrDenseNames));
  meta.layout.field_names = names::split_names(read_string(open->file, path, names::kAttrFieldNames));
  meta.sample_count = read_u64s(open->file, path, names::kAttrSampleCount, 1)[0];
  const std::uint64_t labeled = read_u64s(open->file, path, names::kAttrLabeled, 1)[0];
  if (labeled > 1) bad(path, cat("attribute 'labeled' is ", labeled, ", expected 0 or 1"));
  meta.labeled = labeled == 1;
  if (meta.layout.field_names.size() > kMaxFields || meta.layout.dense_names.empty() ||
      meta.sample_count > kMaxElements / meta.layout.dense_names.size()) {
    bad(path, "impossible counts of samples, dense features or fields");
  }
  meta.max_bag = read_u64s(open->file, path, names::kAttrMaxBag, meta.layout.field_names.size());
  open_datasets(path, *open);
  return open;
}

template <typename Body>
auto with_hdf5(const fs::path& path, Body body) {
  auto lock = hdf5::lock();
  try {
    return body();
  } catch (const H5::Exception& error) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": cannot read CTR shard: ", hdf5::describe(error)));
  }
}

// Elements [first, first + count) of a 1-D or 2-D (rows of `width`) dataset.
template <typename T>
std::vector<T> read_range(const H5::DataSet& dataset, const H5::PredType& type, hsize_t first, hsize_t count,
                          hsize_t width = 0) {
  std::vector<T> out(count * std::max<hsize_t>(width, 1));
  if (out.empty()) return out;
  H5::DataSpace file_space = dataset.getSpace();
  const hsize_t start[2] = {first, 0}, extent[2] = {count, width};
  file_space.selectHyperslab(H5S_SELECT_SET, extent, start);
  const H5::DataSpace memory_space(width > 0 ? 2 : 1, extent);
  dataset.read(out.data(), type, memory_space, file_space);
  return out;
}

void check_values(const fs::path& path, const CtrMeta& meta, std::uint64_t first, const CtrBatch& batch) {
  for (std::size_t s = 0; s < batch.samples; ++s) {
    const std::int32_t label = batch.labels[s];
    if (meta.labeled ? (label != 0 && label != 1) : label != -1) {
      bad(path, cat("label ", label, " of sample ", first + s, " is not ", meta.labeled ? "0 or 1" : "-1 (unlabeled)"));
    }
  }
  for (std::size_t i = 0; i < batch.dense.size(); ++i) {
    if (!std::isfinite(batch.dense[i])) {
      bad(path,
          cat("dense feature ", i % batch.dense_count, " of sample ", first + i / batch.dense_count, " is not finite"));
    }
  }
}

}  // namespace

struct CtrShardRows::Open : OpenFile {};

CtrShardRows::CtrShardRows(const fs::path& path) : path_(path) {
  check_shard_against_manifest(path);  // before HDF5 sees the file
  open_ = with_hdf5(path, [&] { return std::make_unique<Open>(Open{std::move(*open_shard(path))}); });
}

CtrShardRows::~CtrShardRows() {
  if (!open_) return;
  auto lock = hdf5::lock();
  open_.reset();
}

CtrShardRows::CtrShardRows(CtrShardRows&&) noexcept = default;

const CtrMeta& CtrShardRows::meta() const {
  return open_->meta;
}

CtrBatch CtrShardRows::read(std::uint64_t first, std::uint64_t count) const {
  const CtrMeta& meta = open_->meta;
  PSTRAIN_ASSERT(first <= meta.sample_count && count <= meta.sample_count - first, "samples ", first, "+", count,
                 " of ", path_.string(), " (", meta.sample_count, " samples)");
  return with_hdf5(path_, [&] {
    CtrBatch batch;
    batch.samples = count;
    batch.dense_count = meta.layout.dense_names.size();
    batch.dense = read_range<float>(open_->dense, H5::PredType::NATIVE_FLOAT, first, count, batch.dense_count);
    batch.labels = read_range<std::int32_t>(open_->labels, H5::PredType::NATIVE_INT32, first, count);
    check_values(path_, meta, first, batch);
    core::JaggedIds& ids = batch.ids;
    ids.fields = open_->fields.size();
    ids.samples = count;
    ids.offsets.assign(1, 0);
    for (std::size_t f = 0; f < ids.fields; ++f) {
      const Field& field = open_->fields[f];
      const auto offsets = read_range<std::uint64_t>(field.offsets, H5::PredType::NATIVE_UINT64, first, count + 1);
      for (std::size_t s = 0; s < count; ++s) {
        if (offsets[s + 1] < offsets[s] || offsets[s + 1] > field.ids || (first + s == 0 && offsets[0] != 0)) {
          bad(path_, cat("field ", meta.layout.field_names[f], ": the offsets of sample ", first + s,
                         " are not inside its ", field.ids, " ids in order"));
        }
      }
      const std::uint64_t shift = ids.values.size();
      const auto values =
          read_range<std::uint64_t>(field.values, H5::PredType::NATIVE_UINT64, offsets[0], offsets[count] - offsets[0]);
      ids.values.insert(ids.values.end(), values.begin(), values.end());
      for (std::size_t s = 1; s <= count; ++s) ids.offsets.push_back(offsets[s] - offsets[0] + shift);
    }
    return batch;
  });
}

std::vector<std::int32_t> CtrShardRows::labels() const {
  return with_hdf5(path_, [&] {
    return read_range<std::int32_t>(open_->labels, H5::PredType::NATIVE_INT32, 0, open_->meta.sample_count);
  });
}

CtrMeta read_ctr_shard_meta(const fs::path& path) {
  return CtrShardRows(path).meta();
}

CtrBatch read_ctr_shard(const fs::path& path) {
  const CtrShardRows rows(path);
  return rows.read(0, rows.meta().sample_count);
}

bool is_ctr_shard(const fs::path& path) {
  return with_hdf5(path, [&] {
    const H5::H5File file(path.string(), H5F_ACC_RDONLY);
    return file.attrExists(names::kAttrVersion);
  });
}

ShardMeta shard_meta_of(const CtrMeta& meta) {
  ShardMeta shard;
  shard.dataset = meta.layout.dataset;
  shard.sample_shape = {meta.layout.dense_names.size()};
  shard.num_classes = 2;
  shard.sample_count = meta.sample_count;
  shard.source = meta.source;
  shard.format_version = kCtrFormatVersion;
  shard.categorical = CategoricalMeta{meta.layout.field_names, meta.max_bag, meta.labeled};
  return shard;
}

Samples samples_of(CtrBatch batch, const CtrMeta& meta) {
  Samples samples;
  samples.meta = shard_meta_of(meta);
  samples.meta.sample_count = batch.samples;
  samples.features = std::move(batch.dense);
  samples.labels = std::move(batch.labels);
  samples.categorical = std::move(batch.ids);
  return samples;
}

}  // namespace pstrain::data::ctr
