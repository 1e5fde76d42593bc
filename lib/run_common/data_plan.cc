#include "run_common/data_plan.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/error.h"
#include "data/ctr/ctr_shard.h"
#include "data/vocabulary.h"

namespace pstrain::run_common {

namespace {

// Token shards of one folder must index one vocabulary with one window length; image shards carry neither.
void check_same_tokens(const std::filesystem::path& shard, const data::ShardMeta& meta, const DataPlan& plan) {
  const auto& mine = meta.tokens;
  const auto& test = plan.meta.tokens;
  if (mine.has_value() != test.has_value()) {
    throw Error(ExitCode::kInputData,
                cat(shard.string(), (mine ? " holds token ids but " : " holds features but "), plan.test_shard.string(),
                    (test ? " holds token ids" : " holds features"), " (shards of different datasets?)"));
  }
  if (!mine) return;
  if (mine->vocab_crc32 != test->vocab_crc32 || mine->vocab_size != test->vocab_size || mine->ngram != test->ngram) {
    throw Error(ExitCode::kInputData,
                cat(shard.string(), ": ", mine->ngram, "-gram windows over a vocabulary of ", mine->vocab_size,
                    " words (CRC-32 ", mine->vocab_crc32, ") but ", plan.test_shard.string(), " has ", test->ngram,
                    "-grams over ", test->vocab_size, " words (CRC-32 ", test->vocab_crc32,
                    "): shards of different conversions; convert the data again"));
  }
}

// CTR shards: the same categorical fields as the test shard, and labels (a shard without them is for prediction).
void check_same_fields(const std::filesystem::path& shard, const data::ShardMeta& meta, const DataPlan& plan) {
  const auto& mine = meta.categorical;
  const auto& test = plan.meta.categorical;
  if (mine.has_value() != test.has_value()) {
    throw Error(ExitCode::kInputData,
                cat(shard.string(), (mine ? " holds CTR samples but " : " holds no categorical fields but "),
                    plan.test_shard.string(), (test ? " does" : " does not"), " (shards of different datasets?)"));
  }
  if (!mine) return;
  if (!mine->labeled) {
    throw Error(ExitCode::kInputData, cat(shard.string(),
                                          " has no labels (a file to predict on, like Criteo's own "
                                          "test file): training and evaluation need labeled shards"));
  }
  if (mine->field_names != test->field_names) {
    throw Error(ExitCode::kInputData, cat(shard.string(), ": categorical fields other than ", plan.test_shard.string(),
                                          "'s (shards of different conversions; convert the data again)"));
  }
}

// The plan's longest bag of each field becomes the longest of any shard: what bounds the rows a batch looks up.
void widen_longest_bags(const data::ShardMeta& meta, DataPlan& plan) {
  if (!meta.categorical) return;
  std::vector<std::uint64_t>& longest = plan.meta.categorical->max_bag;
  const std::vector<std::uint64_t>& mine = meta.categorical->max_bag;
  PSTRAIN_ASSERT(mine.size() == longest.size(), "a shard's longest bags name ", mine.size(), " fields, the test's ",
                 longest.size());
  for (std::size_t field = 0; field < longest.size(); ++field) longest[field] = std::max(longest[field], mine[field]);
}

}  // namespace

std::uint64_t DataPlan::total_train_samples() const {
  // Per shard, not per trainer: under dynamic dispatch every trainer counts every shard.
  return std::accumulate(shard_samples.begin(), shard_samples.end(), std::uint64_t{0});
}

DataPlan plan_data(const std::filesystem::path& data_dir, int trainers, bool every_trainer_reads_all) {
  DataPlan plan;
  plan.train_shards = data::list_train_shards(data_dir);
  plan.test_shard = data::test_shard_path(data_dir);
  plan.meta = data::read_shard_meta(plan.test_shard);
  check_same_fields(plan.test_shard, plan.meta, plan);  // labeled
  if (static_cast<int>(plan.train_shards.size()) < trainers) {
    throw Error(ExitCode::kUsage,
                cat(data_dir.string(), " holds ", plan.train_shards.size(), " training shards for ", trainers,
                    " trainers: every trainer needs one; rerun pstrain-data with "
                    "--split-count ",
                    trainers, " or more"));
  }
  plan.trainer_shards.resize(trainers);
  plan.trainer_samples.assign(trainers, 0);
  for (std::size_t index = 0; index < plan.train_shards.size(); ++index) {
    const data::ShardMeta meta = data::read_shard_meta(plan.train_shards[index]);
    if (meta.sample_shape != plan.meta.sample_shape) {
      throw Error(ExitCode::kInputData,
                  cat(plan.train_shards[index].string(), ": samples of shape ", data::shape_text(meta.sample_shape),
                      " but ", plan.test_shard.string(), " holds samples of shape ",
                      data::shape_text(plan.meta.sample_shape), " (shards of different datasets?)"));
    }
    if (meta.num_classes != plan.meta.num_classes) {
      throw Error(ExitCode::kInputData, cat(plan.train_shards[index].string(), ": ", meta.num_classes, " classes but ",
                                            plan.test_shard.string(), " has ", plan.meta.num_classes));
    }
    check_same_tokens(plan.train_shards[index], meta, plan);
    check_same_fields(plan.train_shards[index], meta, plan);
    widen_longest_bags(meta, plan);
    for (int trainer = 0; trainer < trainers; ++trainer) {
      if (!every_trainer_reads_all && index % static_cast<std::size_t>(trainers) != static_cast<std::size_t>(trainer)) {
        continue;
      }
      plan.trainer_shards[trainer].push_back(index);
      plan.trainer_samples[trainer] += meta.sample_count;
    }
    plan.shard_samples.push_back(meta.sample_count);
  }
  if (plan.meta.tokens) data::check_vocabulary_file(data_dir, *plan.meta.tokens);
  if (const auto valid = data_dir / data::kValidShardFileName; std::filesystem::exists(valid)) {
    const data::ShardMeta meta = data::read_shard_meta(valid);
    if (meta.sample_shape != plan.meta.sample_shape || meta.num_classes != plan.meta.num_classes) {
      throw Error(ExitCode::kInputData, cat(valid.string(), ": samples of another shape or class count than ",
                                            plan.test_shard.string(), " (shards of different datasets?)"));
    }
    check_same_tokens(valid, meta, plan);
    check_same_fields(valid, meta, plan);
    widen_longest_bags(meta, plan);
    plan.valid_shard = valid;
  }
  for (int trainer = 0; trainer < trainers; ++trainer) {
    if (plan.trainer_samples[trainer] == 0) {
      throw Error(ExitCode::kInputData,
                  cat("trainer ", trainer, "'s shards in ", data_dir.string(), " hold no samples"));
    }
  }
  return plan;
}

std::vector<std::uint32_t> pass_order(std::size_t count, std::uint64_t seed, int pass, int trainer, bool shuffle) {
  std::vector<std::uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  if (!shuffle || count < 2) return order;
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(pass), static_cast<std::uint32_t>(trainer), 0x5eedu};
  std::mt19937_64 generator(sequence);
  for (std::size_t i = count - 1; i > 0; --i) {
    const std::size_t j = static_cast<std::size_t>(generator() % (i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

double training_click_rate(const DataPlan& plan) {
  std::uint64_t clicks = 0;
  std::uint64_t samples = 0;
  for (const std::filesystem::path& shard : plan.train_shards) {
    for (const std::int32_t label : data::ctr::CtrShardRows(shard).labels()) clicks += label == 1 ? 1 : 0;
    samples += plan.shard_samples.at(static_cast<std::size_t>(&shard - plan.train_shards.data()));
  }
  return samples == 0 ? 0.0 : static_cast<double>(clicks) / static_cast<double>(samples);
}

}  // namespace pstrain::run_common
