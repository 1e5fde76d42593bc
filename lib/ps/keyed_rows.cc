#include "ps/keyed_rows.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>

#include "core/counter_random.h"
#include "core/error.h"

namespace pstrain::ps {
namespace {

// Streams drawn from (seed, table): apart from each other and from the sketch's rows (0 .. depth - 1).
constexpr std::uint64_t kIndexStream = 0x6b65795f696e6465ull;   // "key_inde"
constexpr std::uint64_t kDrawStream = 0x61646d69745f6472ull;    // "admit_dr"
constexpr std::uint64_t kValuesStream = 0x66697273745f7661ull;  // "first_va"

std::uint64_t stream_key(std::uint64_t seed, std::uint64_t table, std::uint64_t stream) {
  return combine_key(combine_key(seed, table), stream);
}

std::int64_t checked_capacity(std::int64_t capacity) {
  if (capacity < 1)
    throw Error(ExitCode::kUsage, cat("a keyed table needs at least one row per server, got ", capacity));
  return capacity;
}

// The index's memory: the caller's (a window) when given, else `own`, sized here.
std::span<KeyBucket> index_memory_for(std::int64_t capacity, std::span<KeyBucket> given, std::vector<KeyBucket>& own) {
  const std::uint64_t buckets = keyed_index_buckets(checked_capacity(capacity));
  if (given.empty()) {
    own.resize(buckets);
    return own;
  }
  if (given.size() != buckets) {
    throw Error(ExitCode::kUsage, cat("a keyed table of ", capacity, " rows needs an index of ", buckets,
                                      " buckets, got memory for ", given.size()));
  }
  return given;
}

// Ascending (last_seen, id): the order in which rows are evicted.
bool older(const KeyedEntry& a, const KeyedEntry& b) {
  return a.last_seen != b.last_seen ? a.last_seen < b.last_seen : a.id < b.id;
}

}  // namespace

int key_owner(std::int64_t id, int servers) {
  PSTRAIN_ASSERT(servers >= 1, "servers ", servers);
  return static_cast<int>(mix64(static_cast<std::uint64_t>(id)) % static_cast<std::uint64_t>(servers));
}

std::uint64_t keyed_index_seed(std::uint64_t seed, std::uint64_t table) {
  return stream_key(seed, table, kIndexStream);
}

KeyedRowsLayout keyed_rows_layout(std::int64_t capacity, std::uint32_t probe_bound) {
  KeyedRowsLayout layout;
  layout.capacity = capacity;
  layout.probe_bound = probe_bound;
  layout.sketch_width = std::bit_ceil(2 * static_cast<std::uint64_t>(std::max<std::int64_t>(capacity, 1)));
  layout.sketch_halve_every = 2 * static_cast<std::uint64_t>(std::max<std::int64_t>(capacity, 1));
  return layout;
}

std::uint64_t keyed_index_buckets(std::int64_t capacity) {
  return std::bit_ceil(2 * static_cast<std::uint64_t>(std::max<std::int64_t>(capacity, 1)));
}

bool passes_admission_draw(std::uint64_t seed, std::uint64_t table, std::int64_t id, double probability) {
  if (probability >= 1.0) return true;
  return counter_uniform(stream_key(seed, table, kDrawStream), static_cast<std::uint64_t>(id)) < probability;
}

void first_values(std::uint64_t seed, std::uint64_t table, std::int64_t id, std::span<float> row, float limit) {
  const std::uint64_t key = combine_key(stream_key(seed, table, kValuesStream), static_cast<std::uint64_t>(id));
  for (std::size_t k = 0; k < row.size(); ++k) row[k] = (2.0f * counter_uniform(key, k) - 1.0f) * limit;
}

std::vector<KeyedEntry> deal_entries(std::span<const KeyedEntry> all_entries, int servers, int server,
                                     std::int64_t capacity) {
  std::vector<KeyedEntry> kept;
  for (const KeyedEntry& entry : all_entries) {
    if (key_owner(entry.id, servers) == server) kept.push_back(entry);
  }
  const auto cap = static_cast<std::size_t>(std::max<std::int64_t>(capacity, 0));
  if (kept.size() > cap) {
    // The `cap` most recent first: O(n) selection, not a full sort.
    std::nth_element(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(cap), kept.end(),
                     [](const KeyedEntry& a, const KeyedEntry& b) { return older(b, a); });
    kept.resize(cap);
  }
  std::sort(kept.begin(), kept.end(), [](const KeyedEntry& a, const KeyedEntry& b) { return a.id < b.id; });
  return kept;
}

KeyedRows::KeyedRows(const KeyedRowsLayout& layout, const KeyedRowsPolicy& policy, std::span<KeyBucket> index_memory)
    : capacity_(checked_capacity(layout.capacity)),
      policy_(policy),
      index_(index_memory_for(layout.capacity, index_memory, own_index_),
             static_cast<std::uint32_t>(
                 std::min<std::uint64_t>(layout.probe_bound, keyed_index_buckets(layout.capacity))),
             keyed_index_seed(policy.seed, policy.table)),
      sketch_(layout.sketch_depth, layout.sketch_width, policy.seed, policy.table, layout.sketch_halve_every),
      last_step_(std::numeric_limits<std::int64_t>::min()) {
  reset_rows();
}

void KeyedRows::reset_rows() {
  rows_.assign(static_cast<std::size_t>(capacity_), RowState{});
  free_rows_.clear();
  free_rows_.reserve(static_cast<std::size_t>(capacity_));
  for (std::int64_t r = capacity_ - 1; r >= 0; --r) free_rows_.push_back(r);  // row 0 is taken first
  pending_.clear();
  head_ = tail_ = kNone;
}

// The recency list is intrusive (prev/next per row) and ascending by (last_seen, id): its head is the least
// recently used row. A meeting takes the rows it sees off the list (O(1) each) and, at its end, appends them
// sorted by id (they all have last_seen == step, at least every listed row's), so the list stays sorted without
// a tree: meet is O(m (D + d) + k log k) for m ids seen, k distinct rows seen, probe bound D, sketch depth d;
// each eviction is O(1) plus the index's erase; expire is O(rows expired + 1).
void KeyedRows::unlink(std::int64_t row) {
  RowState& s = rows_[static_cast<std::size_t>(row)];
  (s.prev == kNone ? head_ : rows_[static_cast<std::size_t>(s.prev)].next) = s.next;
  (s.next == kNone ? tail_ : rows_[static_cast<std::size_t>(s.next)].prev) = s.prev;
  s.prev = s.next = kNone;
}

void KeyedRows::append(std::int64_t row) {
  RowState& s = rows_[static_cast<std::size_t>(row)];
  s.prev = tail_;
  s.next = kNone;
  (tail_ == kNone ? head_ : rows_[static_cast<std::size_t>(tail_)].next) = row;
  tail_ = row;
}

void KeyedRows::touch(std::int64_t row, std::int64_t step) {
  RowState& s = rows_[static_cast<std::size_t>(row)];
  if (!s.pending) {
    unlink(row);
    s.pending = true;
    pending_.push_back(row);
  }
  s.last_seen = step;
  ++s.count;
}

RowChange KeyedRows::release(std::int64_t row) {
  RowState& s = rows_[static_cast<std::size_t>(row)];
  unlink(row);
  const bool erased = index_.erase(s.id);
  PSTRAIN_ASSERT(erased, "held row ", row, " has id ", s.id, " that the index does not hold");
  s.held = false;
  ++counters_.evicted;
  return RowChange{row, s.id};
}

void KeyedRows::admit(std::int64_t id, std::int64_t step, MeetingOutcome& outcome) {
  // Checked before evicting anything: a refusal changes no row. Erasing a victim never fills an empty bucket
  // (key_index.cc), so the run keeps its empty bucket.
  const bool room = index_.can_insert(id);
  const bool victim = free_rows_.empty() && head_ != kNone && rows_[static_cast<std::size_t>(head_)].last_seen < step;
  if (!room || (free_rows_.empty() && !victim)) {
    ++counters_.refused;
    ++outcome.refused;
    return;
  }
  std::int64_t row = kNone;
  if (!free_rows_.empty()) {
    row = free_rows_.back();
    free_rows_.pop_back();
  } else {
    row = head_;
    outcome.evicted.push_back(release(row));
  }
  const bool inserted = index_.insert(id, row);
  PSTRAIN_ASSERT(inserted, "id ", id, " found room in the index, then none");
  rows_[static_cast<std::size_t>(row)] = RowState{id, step, 1, kNone, kNone, true, true};
  pending_.push_back(row);
  ++counters_.admitted;
  outcome.admitted.push_back(RowChange{row, id});
}

void KeyedRows::close_meeting(std::int64_t step) {
  // Rows seen at an earlier meeting of the same step sit at the tail with this step: sort them in too.
  while (tail_ != kNone && rows_[static_cast<std::size_t>(tail_)].last_seen == step) {
    const std::int64_t row = tail_;
    unlink(row);
    pending_.push_back(row);
  }
  std::sort(pending_.begin(), pending_.end(), [&](std::int64_t a, std::int64_t b) {
    return rows_[static_cast<std::size_t>(a)].id < rows_[static_cast<std::size_t>(b)].id;
  });
  for (const std::int64_t row : pending_) {
    rows_[static_cast<std::size_t>(row)].pending = false;
    append(row);
  }
  pending_.clear();
}

MeetingOutcome KeyedRows::meet(std::span<const std::int64_t> ids_in_order, std::int64_t step) {
  PSTRAIN_ASSERT(step >= last_step_, "a meeting at step ", step, " after one at step ", last_step_);
  last_step_ = step;
  MeetingOutcome outcome;
  for (const std::int64_t id : ids_in_order) {
    if (const auto row = index_.find(id)) {
      touch(*row, step);
      continue;
    }
    // The draw first: an id that can never be admitted does not inflate the counts of the ids it collides with.
    if (!passes_admission_draw(policy_.seed, policy_.table, id, policy_.admit_probability)) continue;
    if (policy_.admit_after > 1 && sketch_.add(id) < policy_.admit_after) continue;
    admit(id, step, outcome);
  }
  close_meeting(step);
  outcome.expired = expire(step);
  return outcome;
}

std::vector<RowChange> KeyedRows::expire(std::int64_t step) {
  std::vector<RowChange> expired;
  if (policy_.ttl_steps <= 0) return expired;
  PSTRAIN_ASSERT(pending_.empty(), pending_.size(), " rows of a meeting in progress");
  const std::int64_t oldest_kept = step - policy_.ttl_steps;
  while (head_ != kNone && rows_[static_cast<std::size_t>(head_)].last_seen < oldest_kept) {
    const std::int64_t row = head_;
    expired.push_back(release(row));
    free_rows_.push_back(row);
  }
  return expired;
}

std::size_t KeyedRows::bytes() const {
  return index_.bucket_count() * sizeof(KeyBucket) + rows_.capacity() * sizeof(RowState) +
         (free_rows_.capacity() + pending_.capacity()) * sizeof(std::int64_t) + sketch_.bytes();
}

std::vector<KeyedEntry> KeyedRows::entries() const {
  std::vector<KeyedEntry> held;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    const RowState& s = rows_[r];
    if (s.held) held.push_back(KeyedEntry{s.id, static_cast<std::int64_t>(r), s.last_seen, s.count});
  }
  std::sort(held.begin(), held.end(), [](const KeyedEntry& a, const KeyedEntry& b) { return a.id < b.id; });
  return held;
}

// The checks both restores make of a checkpoint's entries.
void KeyedRows::check_entries(std::span<const KeyedEntry> entries) const {
  if (static_cast<std::int64_t>(entries.size()) > capacity_) {
    throw Error(ExitCode::kInputData,
                cat("a keyed table's checkpoint holds ", entries.size(), " rows for a server of ", capacity_));
  }
  for (std::size_t k = 1; k < entries.size(); ++k) {
    if (entries[k - 1].id >= entries[k].id) {
      throw Error(ExitCode::kInputData, cat("a keyed table's checkpoint has id ", entries[k].id, " after id ",
                                            entries[k - 1].id, ": ids must be distinct and increasing"));
    }
  }
}

std::vector<std::int64_t> KeyedRows::restore(std::span<const KeyedEntry> entries, std::span<const std::uint16_t> sketch,
                                             const KeyedRowsCounters& counters) {
  check_entries(entries);
  sketch_.load(sketch, counters.sketch_sightings);
  index_.clear();
  reset_rows();
  counters_ = counters;
  std::vector<std::int64_t> dropped;
  std::int64_t held = 0;
  for (const KeyedEntry& entry : entries) {
    if (!index_.insert(entry.id, held)) {
      dropped.push_back(entry.id);
      continue;
    }
    rows_[static_cast<std::size_t>(held++)] =
        RowState{entry.id, entry.last_seen, entry.count, kNone, kNone, true, false};
  }
  counters_.evicted += dropped.size();
  free_rows_.resize(static_cast<std::size_t>(capacity_ - held));  // the stack held capacity-1 .. 0: keep the top rows
  std::vector<std::int64_t> order(static_cast<std::size_t>(held));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  relink_by_recency(order);
  return dropped;
}

void KeyedRows::restore_exactly(std::span<const KeyedEntry> entries, std::span<const std::uint16_t> sketch,
                                const KeyedRowsCounters& counters, std::span<const KeyBucket> index) {
  check_entries(entries);
  if (index.size() != index_.bucket_count()) {
    throw Error(ExitCode::kInputData, cat("a keyed table's checkpoint holds an index of ", index.size(),
                                          " buckets for a server of ", index_.bucket_count()));
  }
  sketch_.load(sketch, counters.sketch_sightings);
  index_.load(index);
  reset_rows();
  counters_ = counters;
  std::vector<std::int64_t> held;
  for (const KeyedEntry& entry : entries) {
    if (entry.row < 0 || entry.row >= capacity_ || index_.find(entry.id) != entry.row) {
      throw Error(ExitCode::kInputData,
                  cat("a keyed table's checkpoint gives id ", entry.id, " row ", entry.row, ", its index another"));
    }
    rows_[static_cast<std::size_t>(entry.row)] =
        RowState{entry.id, entry.last_seen, entry.count, kNone, kNone, true, false};
    held.push_back(entry.row);
  }
  if (index_.size() != held.size()) {
    throw Error(ExitCode::kInputData,
                cat("a keyed table's checkpoint holds ", held.size(), " rows and an index of ", index_.size()));
  }
  free_rows_.clear();
  for (std::int64_t r = capacity_ - 1; r >= 0; --r) {
    if (!rows_[static_cast<std::size_t>(r)].held) free_rows_.push_back(r);  // the lowest free row is taken first
  }
  relink_by_recency(held);
}

// The recency list of the held rows `rows` rebuilt, ascending (last_seen, id), and the last meeting's step.
void KeyedRows::relink_by_recency(std::vector<std::int64_t> rows) {
  std::sort(rows.begin(), rows.end(), [&](std::int64_t a, std::int64_t b) {
    const RowState& x = rows_[static_cast<std::size_t>(a)];
    const RowState& y = rows_[static_cast<std::size_t>(b)];
    return x.last_seen != y.last_seen ? x.last_seen < y.last_seen : x.id < y.id;
  });
  last_step_ = std::numeric_limits<std::int64_t>::min();
  for (const std::int64_t row : rows) {
    append(row);
    last_step_ = std::max(last_step_, rows_[static_cast<std::size_t>(row)].last_seen);
  }
}

}  // namespace pstrain::ps
