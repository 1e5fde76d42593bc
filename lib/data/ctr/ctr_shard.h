#pragma once
// HDF5 shard format for click-through-rate data (pstrain-data criteo | movielens | synthetic-ctr): dense float
// features, a 0/1 label and, per categorical field, one bag of raw 64-bit ids per sample (zero or more ids).
// The folder layout is the one of data/shard.h (train-NNNNN.h5, valid.h5, test.h5, MANIFEST), so that
// list_train_shards, the MANIFEST checks and the trainers' shard assignment apply unchanged.
//
// One file per shard holding:
//   /dense                 float32 [sample_count, dense_count]   (Criteo: log(1 + max(x, 0)), missing as 0)
//   /labels                int32   [sample_count]                0 or 1; -1 in every row when labeled == 0
//   /ids/<field>/values    uint64  [ids in the field]            the bags of all samples, one after another
//   /ids/<field>/offsets   uint64  [sample_count + 1]            sample s's bag: values[offsets[s] .. offsets[s+1])
//                                                                offsets[0] == 0, non-decreasing, last == ids
//   root attributes: ctr_format_version (uint32, 1), dataset, source (strings), sample_count (uint64),
//                    dense_names, field_names (strings, names joined by ','), labeled (uint32 0/1),
//                    max_bag (uint64 [fields]: the longest bag of each field in this shard, to size buffers).
//   Strings are fixed-length and every dataset contiguous and uncompressed, as data/shard.h's shards. The
//   attribute ctr_format_version is what makes a shard a CTR shard (data::read_shard refuses one by name).
//
// Ids are raw: Criteo's hex strings as the integers they spell, MovieLens's userId and movieId as written; never
// hashed or truncated here (core/jagged_ids.h). Each field is its own id space.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/jagged_ids.h"
#include "data/shard.h"

namespace pstrain::data::ctr {

inline constexpr std::uint32_t kCtrFormatVersion = 1;

struct CtrLayout {
  std::string dataset;                   // "criteo", "movielens", "synthetic-ctr"
  std::vector<std::string> dense_names;  // "I1" ... "I13"
  std::vector<std::string> field_names;  // "C1" ... "C26"

  bool operator==(const CtrLayout&) const = default;
};

struct CtrMeta {
  CtrLayout layout;
  std::string source;  // where the samples came from
  std::uint64_t sample_count = 0;
  bool labeled = true;                 // false: a file without labels (Criteo's own test file), for prediction
  std::vector<std::uint64_t> max_bag;  // per field
};

// Samples column by column, the form the parsers build and the writer takes: per field, the ids of every bag one
// after another and where each bag starts (samples + 1 offsets, from 0).
struct CtrColumns {
  std::size_t samples = 0;
  std::vector<float> dense;  // samples * dense count, row-major
  std::vector<std::int32_t> labels;
  std::vector<std::vector<std::uint64_t>> values;   // [field][id]
  std::vector<std::vector<std::uint64_t>> offsets;  // [field][sample + 1]

  // Empty columns for `fields` fields.
  explicit CtrColumns(std::size_t fields = 0) : values(fields), offsets(fields, std::vector<std::uint64_t>{0}) {}
  std::size_t fields() const { return values.size(); }
  // Appends rows [first, first + count) of `other` (same fields and dense count).
  void append(const CtrColumns& other, std::size_t first, std::size_t count, std::size_t dense_count);
};

// A range of samples as the model reads them: the dense features, the labels and the bags as core::JaggedIds.
struct CtrBatch {
  std::size_t samples = 0;
  std::size_t dense_count = 0;
  std::vector<float> dense;  // samples * dense_count
  std::vector<std::int32_t> labels;
  core::JaggedIds ids;  // fields x samples
};

// The field-major JaggedIds of rows [first, first + count) of `columns`.
core::JaggedIds jagged_ids_of(const CtrColumns& columns, std::size_t first, std::size_t count);

// Writes one shard as its samples arrive, with memory bounded by what one append holds: the columns go to
// temporary files beside `path` and are copied into the HDF5 file by finish(), which then renames it into place.
// Destroyed without finish(), it removes everything it wrote. Throws Error(kOutput).
class CtrShardWriter {
 public:
  CtrShardWriter(std::filesystem::path path, CtrLayout layout, bool labeled);
  ~CtrShardWriter();
  CtrShardWriter(const CtrShardWriter&) = delete;
  CtrShardWriter& operator=(const CtrShardWriter&) = delete;

  void append(const CtrColumns& columns, std::size_t first, std::size_t count);
  std::uint64_t samples() const { return samples_; }
  // Writes the HDF5 file (attributes: `source`, the counts) and renames it to `path`.
  void finish(const std::string& source);

 private:
  struct Spill;
  std::filesystem::path path_;
  CtrLayout layout_;
  bool labeled_;
  std::uint64_t samples_ = 0;
  std::vector<std::uint64_t> ids_;  // per field, so far
  std::vector<std::uint64_t> max_bag_;
  std::unique_ptr<Spill> spill_;
};

// Writes `columns` whole as one shard (tests, MovieLens).
void write_ctr_shard(const std::filesystem::path& path, const CtrLayout& layout, const CtrColumns& columns,
                     bool labeled, const std::string& source);

// True when the file is a CTR shard (has ctr_format_version); the file must be an HDF5 file.
bool is_ctr_shard(const std::filesystem::path& path);

// A CTR shard opened (after the MANIFEST check of data/shard.h, and its attributes and shapes checked) to read
// ranges of its samples: what dynamic dispatch and exact resume need (they address rows of a shard by index).
// Throws Error(kInputData) naming the file for anything missing, inconsistent or out of range in it.
class CtrShardRows {
 public:
  explicit CtrShardRows(const std::filesystem::path& path);
  ~CtrShardRows();
  CtrShardRows(CtrShardRows&&) noexcept;
  CtrShardRows(const CtrShardRows&) = delete;
  CtrShardRows& operator=(const CtrShardRows&) = delete;
  CtrShardRows& operator=(CtrShardRows&&) = delete;

  const CtrMeta& meta() const;
  // Samples [first, first + count) (first + count <= sample_count), checked: labels 0/1 (-1 unlabeled), dense
  // values finite, offsets non-decreasing and inside the field's ids.
  CtrBatch read(std::uint64_t first, std::uint64_t count) const;
  // Every sample's label alone (the training click rate: NE's baseline, report/ctr_metrics.h).
  std::vector<std::int32_t> labels() const;

 private:
  struct Open;
  std::filesystem::path path_;
  std::unique_ptr<Open> open_;
};

CtrMeta read_ctr_shard_meta(const std::filesystem::path& path);

// A CTR shard as the trainer, evaluate and predict read every shard (data/shard.h): the dense features as
// features, sample_shape {dense count}, 2 classes, the bags as Samples::categorical. data::read_shard,
// read_shard_meta and ShardRows read CTR shards through these.
ShardMeta shard_meta_of(const CtrMeta& meta);
Samples samples_of(CtrBatch batch, const CtrMeta& meta);
// Every sample of a shard.
CtrBatch read_ctr_shard(const std::filesystem::path& path);

}  // namespace pstrain::data::ctr
