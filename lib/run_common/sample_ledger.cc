#include "run_common/sample_ledger.h"

#include <algorithm>

#include "comm/mpi_check.h"
#include "core/error.h"
#include "run_common/data_plan.h"

namespace pstrain::run_common {

SampleLedger::SampleLedger(const config::TrainConfig& config, const comm::WorldLayout& layout, const DataPlan& data,
                           const RunSchedule& schedule, std::size_t sample_count)
    : config_(config), layout_(layout), schedule_(schedule), consumed_(schedule.consumed_in_first_pass()) {
  for (const std::size_t shard : data.trainer_shards[layout.trainer_index]) {
    for (std::uint64_t sample = 0; sample < data.shard_samples[shard]; ++sample) {
      sample_ids_.push_back(schedule.samples().id(shard, sample));
    }
  }
  PSTRAIN_ASSERT(sample_ids_.size() == sample_count, sample_ids_.size(), " ids for ", sample_count, " samples");
}

std::vector<std::uint32_t> SampleLedger::pass_order(int pass, bool shared) const {
  // Dynamic dispatch shares one order among all trainers (-1: the stream of no particular trainer).
  std::vector<std::uint32_t> order = run_common::pass_order(sample_ids_.size(), config_.seed, pass,
                                                            shared ? -1 : layout_.trainer_index, config_.shuffle);
  if (pass == schedule_.first_pass()) {  // resumed mid-pass: what is left, in the pass's own order
    std::erase_if(order, [&](std::uint32_t local) { return consumed_[sample_ids_[local]] != 0; });
  }
  return order;
}

void SampleLedger::begin_pass(bool track_coverage) {
  trained_.assign(track_coverage ? consumed_.size() : 0, 0);
}

void SampleLedger::record(const std::vector<std::uint32_t>& order, std::size_t first, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) consumed_[sample_ids_[order[first + i]]] = 1;
  if (!trained_.empty()) {
    for (std::size_t i = 0; i < n; ++i) trained_[sample_ids_[order[first + i]]] = 1;
  }
}

std::vector<std::uint8_t> SampleLedger::consumed_by_me() const {
  std::vector<std::uint8_t> mine(consumed_.size(), 0);  // only this trainer's own samples
  for (const std::uint64_t id : sample_ids_) mine[id] = consumed_[id];
  return mine;
}

void SampleLedger::clear_consumed() {
  std::ranges::fill(consumed_, 0);
}

Coverage SampleLedger::gather_coverage(int pass, std::int64_t chunks_taken, MPI_Comm trainers) const {
  const bool lead = layout_.is_lead_trainer();
  Coverage coverage;
  if (!trained_.empty()) {  // how often each sample of the pass was trained, over all trainers
    std::vector<std::uint8_t> counts(lead ? trained_.size() : 0);
    MPI_CHECK(MPI_Reduce(trained_.data(), counts.data(), static_cast<int>(trained_.size()), MPI_UINT8_T, MPI_SUM, 0,
                         trainers));
    const auto& before = schedule_.consumed_in_first_pass();
    for (std::size_t id = 0; id < counts.size(); ++id) {
      const int expected = pass == schedule_.first_pass() && before[id] ? 0 : 1;
      coverage.missing += counts[id] < expected ? 1 : 0;
      coverage.repeated += counts[id] > expected ? 1 : 0;
    }
  }
  coverage.chunks_per_trainer.resize(lead ? layout_.trainers : 0);
  MPI_CHECK(MPI_Gather(&chunks_taken, 1, MPI_INT64_T, coverage.chunks_per_trainer.data(), 1, MPI_INT64_T, 0, trainers));
  return coverage;
}

}  // namespace pstrain::run_common
