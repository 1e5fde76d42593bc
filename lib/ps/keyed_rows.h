#pragma once
// One keyed table's rows on one server: tables keyed by the raw id instead of hashed into a fixed number of rows
// (lib/nn/id_hash.h). The server holds a map id -> row (key_index.h, readable one-sidedly by trainers), admits a
// new id only once it was seen admit_after times (counted without a row in admission_sketch.h) and passes a
// probability draw, and evicts rows unseen for ttl_steps steps and, at the cap, the least recently used, so that
// memory has a ceiling. Ids without a row read the table's shared default row and get no update (the caller's
// part, counted in default_lookups).
//
// Everything here is a function of the calls made, in their order, and of (seed, table, id): the draw that admits
// an id and a new row's first values never depend on arrival order, nor on which server holds the id. The row
// values themselves (capacity x width floats) and their optimizer state stay with the caller: meet() says which
// rows to zero (evicted, expired) and which to fill (admitted, first_values).
//
// Meeting protocol (the server, under the window's exclusive lock): meet(ids of every trainer's push, in trainer
// order, step) -> zero the evicted and expired rows' state, write the admitted rows' first values, then apply
// the gradients to the rows lookup() finds. Trainers resolve ids between meetings with key_owner() and one read
// of the owner's index (key_index.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ps/admission_sketch.h"
#include "ps/key_index.h"

namespace pstrain::ps {

struct KeyedRowsPolicy {
  std::uint32_t admit_after = 1;   // admitted at the N-th sighting (sketch estimate); 1: at first sight
  double admit_probability = 1.0;  // drawn once per (seed, table, id): an id that fails it is never admitted
  std::int64_t ttl_steps = 0;      // evict rows unseen for more than this many steps; 0: never expire
  std::uint64_t seed = 0;
  std::uint64_t table = 0;
};

struct KeyedRowsLayout {
  std::int64_t capacity = 0;  // rows on this server: the table's cap divided among the servers
  std::uint32_t probe_bound = 16;
  std::uint32_t sketch_depth = 4;
  std::uint64_t sketch_width = std::uint64_t{1} << 16;
  std::uint64_t sketch_halve_every = 0;  // AdmissionSketch's aging; 0: never
};

// The layout of a keyed table of `capacity` rows on a server (table_shard.cc): the sketch as wide as 2 x capacity
// to a power of two, its counters halved every 2 x capacity sightings, so that about one sighting falls on a counter
// between halvings and the estimate of a rare id stays near its recent count (measured: a sketch of 2^16 counters
// that never aged let nearly every id of 5M per field past --admit-after 2 over 10M lines). 16 to 32 B per row.
KeyedRowsLayout keyed_rows_layout(std::int64_t capacity, std::uint32_t probe_bound);

struct RowChange {
  std::int64_t row;
  std::int64_t id;
  bool operator==(const RowChange&) const = default;
};

// What a meeting changed. A row may appear in `evicted` and then in `admitted` (reused at the cap): zero it first.
struct MeetingOutcome {
  std::vector<RowChange> admitted;  // write first_values
  std::vector<RowChange> evicted;   // least recently used, to make room at the cap
  std::vector<RowChange> expired;   // unseen for more than ttl_steps
  std::uint64_t refused = 0;        // ids that passed admission but got no row (cap all seen now, or run full)
};

// One held row, as checkpoints store it.
struct KeyedEntry {
  std::int64_t id;
  std::int64_t row;
  std::int64_t last_seen;
  std::uint64_t count;  // sightings since admission
  bool operator==(const KeyedEntry&) const = default;
};

struct KeyedRowsCounters {
  std::uint64_t admitted = 0;
  std::uint64_t evicted = 0;  // by the cap, by TTL, and dropped on restore
  std::uint64_t refused = 0;
  std::uint64_t default_lookups = 0;   // counted by the caller: lookups that fell on the default row
  std::uint64_t sketch_sightings = 0;  // the sketch's sightings since it last halved (AdmissionSketch::sightings)
};

// The server of `id` among `servers`: mix64(id) mod servers (not the raw id, so that ids allocated in blocks
// spread). Trainers and servers both call this one function.
int key_owner(std::int64_t id, int servers);
// The seed of a keyed table's index (key_index.h's home): a trainer reading the index computes it the same way.
std::uint64_t keyed_index_seed(std::uint64_t seed, std::uint64_t table);
// The bucket count of the index for `capacity` rows: the power of two >= 2 * capacity (load at most 1/2).
std::uint64_t keyed_index_buckets(std::int64_t capacity);
// The admission draw: counter_uniform of (seed, table, id) < probability.
bool passes_admission_draw(std::uint64_t seed, std::uint64_t table, std::int64_t id, double probability);
// A new row's values: uniform in [-limit, limit), a function of (seed, table, id, column) only.
void first_values(std::uint64_t seed, std::uint64_t table, std::int64_t id, std::span<float> row, float limit);
// Elastic resume: of every server's entries, those `server` of `servers` owns (key_owner), at most `capacity`:
// when more land there it keeps the most recently used (drops by ascending (last_seen, id)). Sorted by id; each
// entry's row is still its old server's (key_owner(id, old servers)), for the caller to copy its values.
std::vector<KeyedEntry> deal_entries(std::span<const KeyedEntry> all_entries, int servers, int server,
                                     std::int64_t capacity);

class KeyedRows {
 public:
  // The index lives in `index_memory` (keyed_index_buckets(capacity) buckets, e.g. a window) when given, else in
  // memory of its own. Throws pstrain::Error(kUsage) for capacity < 1 or a wrong index size.
  KeyedRows(const KeyedRowsLayout& layout, const KeyedRowsPolicy& policy, std::span<KeyBucket> index_memory = {});
  KeyedRows(const KeyedRows&) = delete;
  KeyedRows& operator=(const KeyedRows&) = delete;

  std::optional<std::int64_t> lookup(std::int64_t id) const { return index_.find(id); }
  // Whether `row` is held for `id` (from the server's own bookkeeping, not the index).
  bool holds(std::int64_t row, std::int64_t id) const {
    const RowState& state = rows_.at(static_cast<std::size_t>(row));
    return state.held && state.id == id;
  }

  // A meeting at `step` (not below an earlier meeting's): touches present ids, counts absent ones and admits
  // those that qualify, then expire(step).
  MeetingOutcome meet(std::span<const std::int64_t> ids_in_order, std::int64_t step);
  // Evicts the rows last seen before step - ttl_steps (none when ttl_steps == 0), oldest first.
  std::vector<RowChange> expire(std::int64_t step);

  std::int64_t capacity() const { return capacity_; }
  std::int64_t rows_held() const { return capacity_ - static_cast<std::int64_t>(free_rows_.size()); }
  std::uint64_t admitted() const { return counters_.admitted; }
  std::uint64_t evicted() const { return counters_.evicted; }
  std::uint64_t refused() const { return counters_.refused; }
  std::uint64_t default_lookups() const { return counters_.default_lookups; }
  void add_default_lookups(std::uint64_t lookups) { counters_.default_lookups += lookups; }
  KeyedRowsCounters counters() const {
    KeyedRowsCounters counters = counters_;
    counters.sketch_sightings = sketch_.sightings();
    return counters;
  }
  // The index, the bookkeeping and the sketch; the caller adds capacity x width floats of rows.
  std::size_t bytes() const;

  const KeyIndex& index() const { return index_; }
  const AdmissionSketch& sketch() const { return sketch_; }
  const KeyedRowsPolicy& policy() const { return policy_; }

  // Checkpoint state: the held rows sorted by id (with the sketch's counters and counters()).
  std::vector<KeyedEntry> entries() const;
  // Replaces the state. Rows are renumbered 0..n-1 in id order (entries' rows are ignored): the caller moves the
  // values to lookup(id). Throws pstrain::Error(kInputData) for ids out of order or repeated, more entries than
  // capacity, or a sketch of another size. Returns the ids dropped because their index run was full (counted as
  // evicted; with the index at most half full this is rare).
  std::vector<std::int64_t> restore(std::span<const KeyedEntry> entries, std::span<const std::uint16_t> sketch,
                                    const KeyedRowsCounters& counters);
  // The state exactly as it was, for a resume with the same servers: `entries` keep their rows and `index` is
  // the index's buckets as index().buckets() gave them, so that every later admission, refusal and eviction is
  // the uninterrupted run's. Throws pstrain::Error(kInputData) where entries and index disagree.
  void restore_exactly(std::span<const KeyedEntry> entries, std::span<const std::uint16_t> sketch,
                       const KeyedRowsCounters& counters, std::span<const KeyBucket> index);

 private:
  static constexpr std::int64_t kNone = -1;
  struct RowState {
    std::int64_t id = 0;
    std::int64_t last_seen = 0;
    std::uint64_t count = 0;
    std::int64_t prev = kNone;  // the recency list, ascending (last_seen, id)
    std::int64_t next = kNone;
    bool held = false;
    bool pending = false;  // seen at the meeting in progress: off the list, in pending_
  };

  void touch(std::int64_t row, std::int64_t step);
  void admit(std::int64_t id, std::int64_t step, MeetingOutcome& outcome);
  RowChange release(std::int64_t row);
  void close_meeting(std::int64_t step);
  void unlink(std::int64_t row);
  void append(std::int64_t row);
  void reset_rows();
  void check_entries(std::span<const KeyedEntry> entries) const;
  void relink_by_recency(std::vector<std::int64_t> rows);

  std::int64_t capacity_;
  KeyedRowsPolicy policy_;
  std::vector<KeyBucket> own_index_;
  KeyIndex index_;
  AdmissionSketch sketch_;
  std::vector<RowState> rows_;
  std::vector<std::int64_t> free_rows_;  // a stack: initially row 0 on top
  std::vector<std::int64_t> pending_;
  std::int64_t head_ = kNone;  // least recently used
  std::int64_t tail_ = kNone;
  std::int64_t last_step_;
  KeyedRowsCounters counters_;
};

}  // namespace pstrain::ps
