#include "data/ctr/ctr_folder_writer.h"

#include <cmath>

#include "core/error.h"
#include "data/shard.h"

namespace pstrain::data::ctr {

const char* split_name(Split split) {
  switch (split) {
    case Split::kTrain: return "train";
    case Split::kValid: return "valid";
    case Split::kTest: return "test";
  }
  return "?";
}

CtrFolderWriter::CtrFolderWriter(std::filesystem::path folder, CtrLayout layout, std::uint64_t shard_samples,
                                 std::string source)
    : folder_(std::move(folder)),
      layout_(std::move(layout)),
      shard_samples_(shard_samples),
      source_(std::move(source)) {
  PSTRAIN_ASSERT(shard_samples_ > 0, "shard_samples 0");
}

CtrFolderWriter::~CtrFolderWriter() = default;

void CtrFolderWriter::set_unlabeled(Split split) {
  PSTRAIN_ASSERT(split != Split::kTrain && samples(split) == 0, "unlabeled ", split_name(split), " after samples");
  labeled_[static_cast<std::size_t>(split)] = false;
}

CtrShardWriter& CtrFolderWriter::writer(Split split) {
  const bool labeled = labeled_[static_cast<std::size_t>(split)];
  std::unique_ptr<CtrShardWriter>& slot = split == Split::kTrain ? train_ : split == Split::kValid ? valid_ : test_;
  if (!slot) {
    const std::string name = split == Split::kTrain   ? train_shard_file_name(names_.size())
                             : split == Split::kValid ? kValidShardFileName
                                                      : kTestShardFileName;
    slot = std::make_unique<CtrShardWriter>(folder_ / name, layout_, labeled);
  }
  return *slot;
}

void CtrFolderWriter::append(Split split, const CtrColumns& columns, std::size_t first, std::size_t count) {
  samples_[static_cast<std::size_t>(split)] += count;
  if (split != Split::kTrain) {
    writer(split).append(columns, first, count);
    return;
  }
  while (count > 0) {
    CtrShardWriter& train = writer(Split::kTrain);
    const auto room = static_cast<std::size_t>(std::min<std::uint64_t>(shard_samples_ - train.samples(), count));
    train.append(columns, first, room);
    first += room;
    count -= room;
    if (train.samples() == shard_samples_) {
      train.finish(source_);
      train_.reset();
      names_.emplace_back(train_shard_file_name(names_.size()));
    }
  }
}

std::vector<std::string> CtrFolderWriter::finish() {
  if (train_) {
    train_->finish(source_);
    train_.reset();
    names_.emplace_back(train_shard_file_name(names_.size()));
  }
  if (names_.empty()) throw Error(ExitCode::kInputData, cat(source_, ": no training samples"));
  if (!test_) throw Error(ExitCode::kInputData, cat(source_, ": no test samples"));
  std::vector<std::string> names = names_;
  if (valid_) {
    valid_->finish(source_);
    names.push_back(kValidShardFileName);
  }
  test_->finish(source_);
  names.push_back(kTestShardFileName);
  return names;
}

void FieldStats::add(const CtrColumns& columns, std::size_t f, bool count_distinct) {
  const std::vector<std::uint64_t>& offsets = columns.offsets[f];
  for (std::size_t s = 0; s < columns.samples; ++s) {
    const std::uint64_t length = offsets[s + 1] - offsets[s];
    empty_bags += length == 0;
    max_bag = std::max(max_bag, length);
  }
  ids += columns.values[f].size();
  if (count_distinct) {
    for (const std::uint64_t id : columns.values[f]) distinct.add(id);
  }
}

std::string field_stats_text(const CtrLayout& layout, const std::vector<FieldStats>& stats,
                             const std::vector<std::optional<std::uint64_t>>& exact) {
  std::string text = "field\tdistinct_ids\tdistinct_relative_error\tids\tempty_bags\tmax_bag\n";
  for (std::size_t f = 0; f < stats.size(); ++f) {
    const bool known = f < exact.size() && exact[f].has_value();
    const std::uint64_t distinct =
        known ? *exact[f] : static_cast<std::uint64_t>(std::llround(stats[f].distinct.estimate()));
    text += cat(layout.field_names[f], '\t', distinct, '\t',
                known ? std::string("0 (exact)") : cat(HyperLogLog::kRelativeError, " (HyperLogLog)"), '\t',
                stats[f].ids, '\t', stats[f].empty_bags, '\t', stats[f].max_bag, '\n');
  }
  return text;
}

}  // namespace pstrain::data::ctr
