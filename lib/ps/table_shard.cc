#include "ps/table_shard.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "ps/key_lookup.h"

namespace pstrain::ps {

using comm::WindowLock;

namespace {

// The row optimizer's state of local row `local` back to its start (zeros: optim/row_optimizer.h), for a row that
// a keyed table gives to another id. Each state vector holds the same number of floats per row.
void reset_row_state(optim::RowOptimizer& optimizer, std::size_t local, std::size_t rows) {
  for (const auto& entry : optimizer.state()) {
    std::vector<float>& values = *entry.second;
    const std::size_t per_row = values.size() / rows;
    std::fill_n(values.begin() + static_cast<std::ptrdiff_t>(local * per_row), per_row, 0.0f);
  }
}

std::unique_ptr<KeyedRows> keyed_rows_of(const TableSpec& table, std::size_t t, std::span<KeyBucket> index) {
  const KeyedSpec& keys = table.keys;
  const KeyedRowsLayout layout =
      keyed_rows_layout(static_cast<std::int64_t>(keys.rows_per_shard - 1), keyed_probe_bound(table));
  const KeyedRowsPolicy policy{keys.admit_after, keys.admit_probability, keys.ttl_steps, keys.seed, t};
  return std::make_unique<KeyedRows>(layout, policy, index);
}

}  // namespace

TableShard::TableShard(TableWindows& windows, const TablePlan& plan, std::size_t table, const comm::WorldLayout& layout,
                       std::unique_ptr<optim::RowOptimizer> optimizer)
    : windows_(windows),
      plan_(plan),
      table_(table),
      layout_(layout),
      width_(plan.table(table).width),
      capacity_(plan.capacity(table, layout.shard_index)),
      optimizer_(std::move(optimizer)),
      position_(plan.rows(table).rows_on(layout.shard_index), -1) {
  if (!plan.table(table).exact_keys()) return;
  WindowLock lock(windows_.key_index(), layout_.world_rank, WindowLock::Mode::kExclusive);
  keyed_ = keyed_rows_of(plan.table(table), table, windows_.local_key_index(table));
}

void TableShard::fill_rows(const std::function<void(std::span<float>)>& fill) {
  WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kExclusive);
  fill(windows_.local_rows(table_));
}

void TableShard::update(std::span<const float> weights) {
  const int self = layout_.world_rank;
  touched_.clear();
  summed_.clear();
  {
    WindowLock ids_lock(windows_.row_ids(), self, WindowLock::Mode::kShared);
    WindowLock grads_lock(windows_.row_grads(), self, WindowLock::Mode::kShared);
    for (std::size_t trainer = 0; trainer < weights.size(); ++trainer) {
      const float weight = weights[trainer];
      if (weight == 0) continue;
      const std::int64_t* ids = windows_.local_slot_ids(table_, static_cast<int>(trainer)).data();
      const float* gradients = windows_.local_slot_grads(table_, static_cast<int>(trainer)).data();
      PSTRAIN_ASSERT(ids[0] >= 0 && static_cast<std::size_t>(ids[0]) <= capacity_, "trainer ", trainer, " sent ",
                     ids[0], " rows for a slot of ", capacity_);
      for (std::int64_t k = 0; k < ids[0]; ++k) {
        const auto local = static_cast<std::size_t>(ids[1 + k]);
        PSTRAIN_ASSERT(local < position_.size(), "row ", local, " outside this shard's ", position_.size());
        // The default row gets no update, nor a row given to another id since the trainer read it (async: the
        // row slot carries the ids its rows were read for; in sync no row changes hands between read and push).
        if (keyed_ && (local == 0 || !keyed_->holds(static_cast<std::int64_t>(local) - 1, ids[1 + ids[0] + k]))) {
          if (local != 0) ++rows_dropped_;
          continue;
        }
        const float* row = gradients + static_cast<std::size_t>(k) * width_;
        if (position_[local] < 0) {  // the first trainer to touch it: as the dense sum's first term
          position_[local] = static_cast<std::int32_t>(touched_.size());
          touched_.push_back(static_cast<std::uint32_t>(local));
          for (std::size_t j = 0; j < width_; ++j) summed_.push_back(weight * row[j]);
        } else {
          float* sum = summed_.data() + static_cast<std::size_t>(position_[local]) * width_;
          for (std::size_t j = 0; j < width_; ++j) sum[j] += weight * row[j];
        }
      }
    }
  }
  {
    WindowLock lock(windows_.rows(), self, WindowLock::Mode::kExclusive);
    optimizer_->step(windows_.local_rows(table_), touched_,
                     summed_);  // every step, touched or not: the schedule's count
  }
  for (const std::uint32_t local : touched_) position_[local] = -1;
  rows_updated_ += touched_.size();
}

void TableShard::meet(std::int64_t step) {
  meet_trainers(step, 0, layout_.trainers);
}

void TableShard::meet_one(std::int64_t step, int trainer) {
  meet_trainers(step, trainer, trainer + 1);
}

void TableShard::meet_trainers(std::int64_t step, int first, int last) {
  if (!keyed_) return;
  const int self = layout_.world_rank;
  sightings_.clear();
  {
    WindowLock ids_lock(windows_.row_ids(), self, WindowLock::Mode::kShared);
    for (int trainer = first; trainer < last; ++trainer) {
      const std::span<const std::int64_t> slot = windows_.local_slot_ids(table_, trainer);
      const std::size_t at = 2 + 2 * static_cast<std::size_t>(slot[0]);  // past [n, rows, their ids, m]
      const auto ids = static_cast<std::size_t>(slot[at - 1]);
      PSTRAIN_ASSERT(at + ids <= slot.size(), "trainer ", trainer, " sent ", ids, " sightings for a slot of ",
                     slot.size() - at);
      sightings_.insert(sightings_.end(), slot.begin() + static_cast<std::ptrdiff_t>(at),
                        slot.begin() + static_cast<std::ptrdiff_t>(at + ids));
    }
  }
  MeetingOutcome outcome;
  {
    WindowLock lock(windows_.key_index(), self, WindowLock::Mode::kExclusive);
    outcome = keyed_->meet(sightings_, step);
    publish_counters();
  }
  WindowLock lock(windows_.rows(), self, WindowLock::Mode::kExclusive);
  const std::span<float> rows = windows_.local_rows(table_);
  const auto row_of = [&](std::int64_t keyed_row) {
    return rows.subspan(static_cast<std::size_t>(1 + keyed_row) * width_, width_);
  };
  for (const auto* freed : {&outcome.evicted, &outcome.expired}) {
    for (const RowChange& change : *freed) {
      std::ranges::fill(row_of(change.row), 0.0f);
      reset_row_state(*optimizer_, static_cast<std::size_t>(1 + change.row), position_.size());
    }
  }
  const TableSpec& table = plan_.table(table_);
  for (const RowChange& change : outcome.admitted) {
    reset_row_state(*optimizer_, static_cast<std::size_t>(1 + change.row), position_.size());
    first_values(table.keys.seed, table_, change.id, row_of(change.row), table.keys.first_limit);
  }
}

std::vector<std::string> TableShard::state_names() const {
  std::vector<std::string> names;
  for (const auto& entry : optimizer_->state()) names.push_back(entry.first);
  return names;
}

// Under the key window's exclusive lock: the counters trainers read (key_lookup.h read_key_counters).
void TableShard::publish_counters() {
  const std::span<std::int64_t> counters = windows_.local_key_counters(table_);
  counters[kRowsHeld] = keyed_->rows_held();
  counters[kRowsAdmitted] = static_cast<std::int64_t>(keyed_->admitted());
  counters[kRowsEvicted] = static_cast<std::int64_t>(keyed_->evicted());
  counters[kIdsRefused] = static_cast<std::int64_t>(keyed_->refused());
  counters[kGradientsDropped] = static_cast<std::int64_t>(rows_dropped_);
}

KeyedShardState TableShard::keyed_state() const {
  PSTRAIN_ASSERT(keyed_ != nullptr, "table ", plan_.table(table_).name, " is not keyed");
  KeyedShardState out;
  {
    WindowLock lock(windows_.key_index(), layout_.world_rank, WindowLock::Mode::kShared);
    out.entries = keyed_->entries();
    const std::span<const KeyBucket> index = keyed_->index().buckets();
    out.index.assign(index.begin(), index.end());
    const std::span<const std::uint16_t> sketch = keyed_->sketch().counters();
    out.sketch.assign(sketch.begin(), sketch.end());
    out.counters = keyed_->counters();
  }
  WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kShared);
  const std::span<const float> rows = windows_.local_rows(table_);
  const std::size_t local_rows = position_.size();
  for (const auto& entry : optimizer_->state()) out.state.emplace_back(entry.first, std::vector<float>());
  for (KeyedEntry& entry : out.entries) {
    out.held_rows.push_back(entry.row);
    const auto local = static_cast<std::size_t>(1 + entry.row);
    out.rows.insert(out.rows.end(), rows.begin() + static_cast<std::ptrdiff_t>(local * width_),
                    rows.begin() + static_cast<std::ptrdiff_t>((local + 1) * width_));
    std::size_t k = 0;
    for (const auto& [name, values] : optimizer_->state()) {
      const std::size_t per = values->size() / local_rows;
      auto& target = out.state[k++].second;
      target.insert(target.end(), values->begin() + static_cast<std::ptrdiff_t>(local * per),
                    values->begin() + static_cast<std::ptrdiff_t>((local + 1) * per));
    }
  }
  for (std::size_t k = 0; k < out.entries.size(); ++k) out.entries[k].row = static_cast<std::int64_t>(k);
  return out;
}

void TableShard::restore_keyed(const KeyedShardState& state, std::uint64_t steps) {
  PSTRAIN_ASSERT(keyed_ != nullptr, "table ", plan_.table(table_).name, " is not keyed");
  {
    WindowLock lock(windows_.key_index(), layout_.world_rank, WindowLock::Mode::kExclusive);
    if (state.index.empty()) {
      keyed_->restore(state.entries, state.sketch, state.counters);
    } else {
      std::vector<KeyedEntry> entries = state.entries;
      for (std::size_t k = 0; k < entries.size(); ++k) entries[k].row = state.held_rows.at(k);
      keyed_->restore_exactly(entries, state.sketch, state.counters, state.index);
    }
    publish_counters();
  }
  WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kExclusive);
  const std::span<float> rows = windows_.local_rows(table_);
  std::ranges::fill(rows, 0.0f);
  const std::size_t local_rows = position_.size();
  for (const auto& entry : optimizer_->state()) std::ranges::fill(*entry.second, 0.0f);
  for (const KeyedEntry& entry : state.entries) {
    const std::optional<std::int64_t> row = keyed_->lookup(entry.id);
    if (!row) continue;  // dropped by restore: counted as evicted
    const auto local = static_cast<std::size_t>(1 + *row);
    const auto from = static_cast<std::size_t>(entry.row);
    std::copy_n(state.rows.begin() + static_cast<std::ptrdiff_t>(from * width_), width_,
                rows.begin() + static_cast<std::ptrdiff_t>(local * width_));
    std::size_t k = 0;
    for (const auto& [name, values] : optimizer_->state()) {
      const std::vector<float>& saved = state.state.at(k++).second;
      PSTRAIN_ASSERT(state.state[k - 1].first == name, "state ", state.state[k - 1].first, " for ", name);
      const std::size_t per = values->size() / local_rows;
      std::copy_n(saved.begin() + static_cast<std::ptrdiff_t>(from * per), per,
                  values->begin() + static_cast<std::ptrdiff_t>(local * per));
    }
  }
  optimizer_->set_steps_taken(steps);
}

void TableShard::visit_rows(const RowsVisitor& use) {
  WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kShared);
  std::vector<std::pair<std::string, std::span<const float>>> state;
  for (const auto& [name, values] : optimizer_->state()) state.emplace_back(name, *values);
  use(windows_.local_rows(table_), state);
}

void TableShard::load_rows(const RowsLoader& load, std::uint64_t steps) {
  {
    WindowLock lock(windows_.rows(), layout_.world_rank, WindowLock::Mode::kExclusive);
    std::vector<std::pair<std::string, std::span<float>>> state;
    for (const auto& [name, values] : optimizer_->state()) state.emplace_back(name, *values);
    load(windows_.local_rows(table_), state);
  }
  optimizer_->set_steps_taken(steps);
}

}  // namespace pstrain::ps
