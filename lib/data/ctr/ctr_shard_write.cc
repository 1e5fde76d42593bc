// Writing CTR shards as their samples stream in: each column goes to a temporary file first (the ids of a shard are
// counted only once all its samples are seen, and HDF5's contiguous datasets need their size when created), then
// into the HDF5 file in blocks, so that memory stays bounded by one block whatever the shard's size.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "core/files.h"
#include "data/ctr/ctr_hdf5.h"
#include "data/ctr/ctr_shard.h"
#include "data/shard_hdf5.h"

namespace pstrain::data::ctr {

namespace fs = std::filesystem;

namespace {

// One column's elements in a temporary file, removed by the destructor.
class SpillFile {
 public:
  explicit SpillFile(fs::path path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "w+b")) {
    if (file_ == nullptr) {
      throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), ": ", std::strerror(errno)));
    }
  }
  ~SpillFile() {
    std::fclose(file_);
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  template <typename T>
  void write(const T* data, std::size_t count) {
    if (count > 0 && std::fwrite(data, sizeof(T), count, file_) != count) {
      throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), ": ", std::strerror(errno)));
    }
    elements_ += count;
  }
  std::uint64_t elements() const { return elements_; }

  // Copies the column into `dataset` (created with elements() elements of `memory_type`'s size, rows of `width`).
  template <typename T>
  void copy_into(H5::DataSet& dataset, const H5::PredType& memory_type, hsize_t width) {
    if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0) {
      throw Error(ExitCode::kOutput, cat("cannot read back ", path_.string(), ": ", std::strerror(errno)));
    }
    constexpr std::size_t kBlockRows = 1 << 16;
    std::vector<T> block(kBlockRows * width);
    const hsize_t rows = elements_ / width;
    for (hsize_t row = 0; row < rows;) {
      const hsize_t count = std::min<hsize_t>(kBlockRows, rows - row);
      if (std::fread(block.data(), sizeof(T), count * width, file_) != count * width) {
        throw Error(ExitCode::kOutput, cat("cannot read back ", path_.string(), ": short read"));
      }
      H5::DataSpace file_space = dataset.getSpace();
      const hsize_t start[2] = {row, 0}, extent[2] = {count, width};
      file_space.selectHyperslab(H5S_SELECT_SET, extent, start);  // a 1-D dataset reads the first entries only
      const H5::DataSpace memory_space(2, extent);
      dataset.write(block.data(), memory_type, memory_space, file_space);
      row += count;
    }
  }

 private:
  fs::path path_;
  std::FILE* file_;
  std::uint64_t elements_ = 0;
};

void write_string(H5::H5Object& target, const char* name, const std::string& value) {
  H5::StrType type(H5::PredType::C_S1, std::max<std::size_t>(value.size(), 1));
  type.setCset(H5T_CSET_UTF8);
  target.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value);
}

void write_u64s(H5::H5Object& target, const char* name, const std::vector<std::uint64_t>& values, bool scalar) {
  const hsize_t length[1] = {values.size()};
  const H5::DataSpace space = scalar ? H5::DataSpace(H5S_SCALAR) : H5::DataSpace(1, length);
  target.createAttribute(name, H5::PredType::STD_U64LE, space).write(H5::PredType::NATIVE_UINT64, values.data());
}

void write_u32(H5::H5Object& target, const char* name, std::uint32_t value) {
  target.createAttribute(name, H5::PredType::STD_U32LE, H5::DataSpace(H5S_SCALAR))
      .write(H5::PredType::NATIVE_UINT32, &value);
}

// 1-D [rows], or 2-D [rows, width] when width > 0.
H5::DataSet create(H5::Group& where, const std::string& name, const H5::PredType& type, hsize_t rows,
                   hsize_t width = 0) {
  const hsize_t dims[2] = {rows, width};
  return where.createDataSet(name, type, H5::DataSpace(width > 0 ? 2 : 1, dims));
}

}  // namespace

struct CtrShardWriter::Spill {
  explicit Spill(const std::string& prefix) : dense(prefix + "dense"), labels(prefix + "labels") {}
  SpillFile dense, labels;
  std::vector<std::unique_ptr<SpillFile>> values, offsets;
};

CtrShardWriter::CtrShardWriter(fs::path path, CtrLayout layout, bool labeled)
    : path_(std::move(path)),
      layout_(std::move(layout)),
      labeled_(labeled),
      ids_(layout_.field_names.size(), 0),
      max_bag_(layout_.field_names.size(), 0) {
  PSTRAIN_ASSERT(!layout_.dense_names.empty(), "a CTR shard needs at least one dense feature");
  const std::string temp = cat(path_.string(), ".tmp-", ::getpid(), ".");
  spill_ = std::make_unique<Spill>(temp);
  for (std::size_t f = 0; f < layout_.field_names.size(); ++f) {
    spill_->values.push_back(std::make_unique<SpillFile>(cat(temp, "values-", f)));
    spill_->offsets.push_back(std::make_unique<SpillFile>(cat(temp, "offsets-", f)));
    const std::uint64_t zero = 0;
    spill_->offsets.back()->write(&zero, 1);
  }
}

CtrShardWriter::~CtrShardWriter() = default;

void CtrShardWriter::append(const CtrColumns& columns, std::size_t first, std::size_t count) {
  const std::size_t width = layout_.dense_names.size();
  PSTRAIN_ASSERT(columns.fields() == ids_.size() && first + count <= columns.samples &&
                     columns.dense.size() == columns.samples * width,
                 "columns of ", columns.fields(), " fields, ", columns.samples, " samples for a writer of ",
                 ids_.size(), " fields");
  spill_->dense.write(columns.dense.data() + first * width, count * width);
  spill_->labels.write(columns.labels.data() + first, count);
  std::vector<std::uint64_t> shifted(count);
  for (std::size_t f = 0; f < ids_.size(); ++f) {
    const std::vector<std::uint64_t>& offsets = columns.offsets[f];
    const std::uint64_t begin = offsets[first], end = offsets[first + count];
    spill_->values[f]->write(columns.values[f].data() + begin, end - begin);
    for (std::size_t s = 0; s < count; ++s) {
      shifted[s] = offsets[first + s + 1] - begin + ids_[f];
      max_bag_[f] = std::max(max_bag_[f], offsets[first + s + 1] - offsets[first + s]);
    }
    spill_->offsets[f]->write(shifted.data(), count);
    ids_[f] += end - begin;
  }
  samples_ += count;
}

void CtrShardWriter::finish(const std::string& source) {
  const fs::path temp(cat(path_.string(), ".tmp-", ::getpid()));
  try {
    auto lock = hdf5::lock();
    H5::H5File file(temp.string(), H5F_ACC_TRUNC);
    write_u32(file, names::kAttrVersion, kCtrFormatVersion);
    write_string(file, names::kAttrDataset, layout_.dataset);
    write_string(file, names::kAttrSource, source);
    write_u64s(file, names::kAttrSampleCount, {samples_}, true);
    write_string(file, names::kAttrDenseNames, names::join_names(layout_.dense_names));
    write_string(file, names::kAttrFieldNames, names::join_names(layout_.field_names));
    write_u32(file, names::kAttrLabeled, labeled_ ? 1 : 0);
    write_u64s(file, names::kAttrMaxBag, max_bag_, false);
    const hsize_t width = layout_.dense_names.size();
    H5::DataSet dense = create(file, names::kDense, H5::PredType::IEEE_F32LE, samples_, width);
    spill_->dense.copy_into<float>(dense, H5::PredType::NATIVE_FLOAT, width);
    H5::DataSet labels = create(file, names::kLabels, H5::PredType::STD_I32LE, samples_);
    spill_->labels.copy_into<std::int32_t>(labels, H5::PredType::NATIVE_INT32, 1);
    H5::Group ids = file.createGroup(names::kIds);
    for (std::size_t f = 0; f < ids_.size(); ++f) {
      H5::Group field = ids.createGroup(layout_.field_names[f]);
      H5::DataSet values = create(field, names::kValues, H5::PredType::STD_U64LE, ids_[f]);
      spill_->values[f]->copy_into<std::uint64_t>(values, H5::PredType::NATIVE_UINT64, 1);
      H5::DataSet offsets = create(field, names::kOffsets, H5::PredType::STD_U64LE, samples_ + 1);
      spill_->offsets[f]->copy_into<std::uint64_t>(offsets, H5::PredType::NATIVE_UINT64, 1);
    }
    file.close();
  } catch (const H5::Exception& error) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), ": ", hdf5::describe(error)));
  }
  spill_.reset();
  fsync_path(temp);
  std::error_code ec;
  fs::rename(temp, path_, ec);
  if (ec) {
    fs::remove(temp, ec);
    throw Error(ExitCode::kOutput, cat("cannot write ", path_.string(), ": rename: ", ec.message()));
  }
}

void write_ctr_shard(const fs::path& path, const CtrLayout& layout, const CtrColumns& columns, bool labeled,
                     const std::string& source) {
  CtrShardWriter writer(path, layout, labeled);
  writer.append(columns, 0, columns.samples);
  writer.finish(source);
}

}  // namespace pstrain::data::ctr
