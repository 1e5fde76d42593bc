#pragma once
// The shards of one CTR conversion, written as samples stream in: train-00000.h5, train-00001.h5 ... of at most
// `shard_samples` samples each (the next starts when one is full), valid.h5 and test.h5 (data/shard.h's names),
// into `folder` (pstrain-data's staging folder). Memory: what one append holds (CtrShardWriter).
#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/ctr/ctr_shard.h"
#include "data/ctr/hyperloglog.h"

namespace pstrain::data::ctr {

enum class Split { kTrain = 0, kValid = 1, kTest = 2 };
const char* split_name(Split split);

class CtrFolderWriter {
 public:
  CtrFolderWriter(std::filesystem::path folder, CtrLayout layout, std::uint64_t shard_samples, std::string source);
  ~CtrFolderWriter();
  CtrFolderWriter(const CtrFolderWriter&) = delete;
  CtrFolderWriter& operator=(const CtrFolderWriter&) = delete;

  // test.h5 (or valid.h5) without labels: Criteo's own test file. Before the first append to it.
  void set_unlabeled(Split split);
  void append(Split split, const CtrColumns& columns, std::size_t first, std::size_t count);
  std::uint64_t samples(Split split) const { return samples_[static_cast<std::size_t>(split)]; }

  // Finishes every shard; returns their file names, train shards first, test.h5 last. Error(kInputData) when
  // there are no training or no test samples.
  std::vector<std::string> finish();

 private:
  CtrShardWriter& writer(Split split);

  std::filesystem::path folder_;
  CtrLayout layout_;
  std::uint64_t shard_samples_;
  std::string source_;
  std::array<bool, 3> labeled_{true, true, true};
  std::array<std::uint64_t, 3> samples_{};
  std::unique_ptr<CtrShardWriter> train_, valid_, test_;
  std::vector<std::string> names_;  // finished train shards
};

// What ctr_fields.tsv records per categorical field, accumulated over every sample converted.
struct FieldStats {
  HyperLogLog distinct;
  std::uint64_t ids = 0, empty_bags = 0, max_bag = 0;

  // The bags of `columns`' field f.
  void add(const CtrColumns& columns, std::size_t f, bool count_distinct = true);
};

// The text of ctr_fields.tsv: a header line, then per field: name, distinct ids (HyperLogLog estimate, or exact
// where `exact` holds them), the estimate's relative standard error, ids, empty bags, the longest bag.
std::string field_stats_text(const CtrLayout& layout, const std::vector<FieldStats>& stats,
                             const std::vector<std::optional<std::uint64_t>>& exact = {});

}  // namespace pstrain::data::ctr
