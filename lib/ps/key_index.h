#pragma once
// The id -> row index of one keyed table (keyed_rows.h) on one server: an open-addressing hash table in flat,
// caller-owned memory, so that the server can expose it in an MPI window and a trainer can resolve an id with
// one one-sided read. It is written by hand, not a std::unordered_map, because remote readers depend on its
// exact layout in window memory:
//
//   bucket b (0 <= b < bucket_count, a power of two) is a KeyBucket of 16 bytes at byte offset 16 * b:
//     bytes 0..7   id   (int64, host byte order)
//     bytes 8..15  row  (int64; kEmptyRow = -1 means the bucket is empty and its id means nothing)
//   home(id) = combine_key(seed, id) mod bucket_count  (lib/core/counter_random.h; key_home below)
//
// The invariant a reader relies on: every present id lies in one of the probe_bound (D) buckets home(id),
// home(id) + 1, ..., home(id) + D - 1 (wrapping around). So a trainer fetches those D buckets (one get, or two
// when the run wraps: run_pieces) and find_in_run either finds the id or proves it absent. The server changes
// the index only under the window's exclusive lock (at meetings), so a run read under a shared lock is whole.
//
// Linear probing bounded by D: insert takes the first empty bucket of the id's run and refuses when there is
// none (the caller does not admit the id this time); erase shifts later entries back (Knuth's Algorithm R), so
// no tombstones accumulate. Deterministic: the same sequence of operations leaves the same bucket contents.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>

namespace pstrain::ps {

inline constexpr std::int64_t kEmptyRow = -1;

struct KeyBucket {
  std::int64_t id;
  std::int64_t row;  // kEmptyRow: empty
};
static_assert(sizeof(KeyBucket) == 16 && std::is_standard_layout_v<KeyBucket> &&
                  std::is_trivially_copyable_v<KeyBucket>,
              "remote readers fetch KeyBuckets as 16 raw bytes");

// The home bucket of `id` in an index of `bucket_count` buckets (a power of two) hashed with `seed`.
std::uint64_t key_home(std::int64_t id, std::uint64_t seed, std::uint64_t bucket_count);

// A contiguous piece of buckets [first, first + count).
struct BucketPiece {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};
// The `length` buckets from `home` on, wrapping around an index of `bucket_count` buckets: one piece, or two
// when the run passes the end (pieces[1].count == 0 when it does not). length <= bucket_count.
std::array<BucketPiece, 2> run_pieces(std::uint64_t home, std::uint64_t length, std::uint64_t bucket_count);

// The row of `id` in a run of buckets fetched from its home on (the pieces of run_pieces, in order), or nullopt:
// with the whole run of D buckets, nullopt proves the id absent from the index.
std::optional<std::int64_t> find_in_run(std::span<const KeyBucket> run, std::int64_t id);

class KeyIndex {
 public:
  // Empties `buckets`, which must outlive the index. Throws pstrain::Error(kUsage) unless the bucket count is a
  // power of two and 1 <= probe_bound <= bucket count.
  KeyIndex(std::span<KeyBucket> buckets, std::uint32_t probe_bound, std::uint64_t seed);

  std::uint64_t bucket_count() const { return buckets_.size(); }
  std::uint32_t probe_bound() const { return probe_bound_; }
  std::uint64_t seed() const { return seed_; }
  std::uint64_t size() const { return size_; }
  std::uint64_t home(std::int64_t id) const { return key_home(id, seed_, buckets_.size()); }
  std::span<const KeyBucket> buckets() const { return buckets_; }

  std::optional<std::int64_t> find(std::int64_t id) const;
  // Whether insert(id, ...) would succeed: the id is present or its run has an empty bucket.
  bool can_insert(std::int64_t id) const;
  // Sets the row of `id` (row >= 0): in place when present, else in the first empty bucket of its run. false,
  // changing nothing, when the id is absent and its run is full.
  bool insert(std::int64_t id, std::int64_t row);
  // Removes `id`; false when it was absent.
  bool erase(std::int64_t id);
  void clear();
  // The buckets as another index of the same count, seed and probe bound held them (a checkpoint's copy).
  void load(std::span<const KeyBucket> buckets);

 private:
  std::optional<std::uint64_t> position(std::int64_t id) const;
  std::uint64_t distance(std::uint64_t from, std::uint64_t to) const { return (to - from) & mask_; }

  std::span<KeyBucket> buckets_;
  std::uint64_t mask_;
  std::uint32_t probe_bound_;
  std::uint64_t seed_;
  std::uint64_t size_ = 0;
};

}  // namespace pstrain::ps
