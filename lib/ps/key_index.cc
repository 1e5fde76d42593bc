#include "ps/key_index.h"

#include <algorithm>
#include <bit>

#include "core/counter_random.h"
#include "core/error.h"

namespace pstrain::ps {

std::uint64_t key_home(std::int64_t id, std::uint64_t seed, std::uint64_t bucket_count) {
  return combine_key(seed, static_cast<std::uint64_t>(id)) & (bucket_count - 1);
}

std::array<BucketPiece, 2> run_pieces(std::uint64_t home, std::uint64_t length, std::uint64_t bucket_count) {
  PSTRAIN_ASSERT(home < bucket_count && length <= bucket_count, "home ", home, ", length ", length, ", buckets ",
                 bucket_count);
  const std::uint64_t first = std::min(length, bucket_count - home);
  return {BucketPiece{home, first}, BucketPiece{0, length - first}};
}

std::optional<std::int64_t> find_in_run(std::span<const KeyBucket> run, std::int64_t id) {
  // The whole run, not up to the first empty bucket: a reader's answer then rests on the within-D invariant
  // alone, not also on the absence of gaps.
  for (const KeyBucket& bucket : run) {
    if (bucket.row != kEmptyRow && bucket.id == id) return bucket.row;
  }
  return std::nullopt;
}

KeyIndex::KeyIndex(std::span<KeyBucket> buckets, std::uint32_t probe_bound, std::uint64_t seed)
    : buckets_(buckets), mask_(buckets.size() - 1), probe_bound_(probe_bound), seed_(seed) {
  if (buckets.empty() || !std::has_single_bit(buckets.size())) {
    throw Error(ExitCode::kUsage, cat("a key index needs a power-of-two bucket count, got ", buckets.size()));
  }
  if (probe_bound < 1 || probe_bound > buckets.size()) {
    throw Error(ExitCode::kUsage,
                cat("a key index's probe bound must be in [1, ", buckets.size(), "], got ", probe_bound));
  }
  clear();
}

void KeyIndex::clear() {
  std::fill(buckets_.begin(), buckets_.end(), KeyBucket{0, kEmptyRow});
  size_ = 0;
}

void KeyIndex::load(std::span<const KeyBucket> buckets) {
  PSTRAIN_ASSERT(buckets.size() == buckets_.size(), buckets.size(), " buckets for an index of ", buckets_.size());
  std::copy(buckets.begin(), buckets.end(), buckets_.begin());
  size_ = static_cast<std::uint64_t>(
      std::count_if(buckets_.begin(), buckets_.end(), [](const KeyBucket& b) { return b.row != kEmptyRow; }));
}

std::optional<std::uint64_t> KeyIndex::position(std::int64_t id) const {
  const std::uint64_t start = home(id);
  for (std::uint64_t k = 0; k < probe_bound_; ++k) {
    const std::uint64_t b = (start + k) & mask_;
    if (buckets_[b].row == kEmptyRow) return std::nullopt;  // no gaps: the id would lie before this bucket
    if (buckets_[b].id == id) return b;
  }
  return std::nullopt;
}

std::optional<std::int64_t> KeyIndex::find(std::int64_t id) const {
  const auto b = position(id);
  return b ? std::optional(buckets_[*b].row) : std::nullopt;
}

bool KeyIndex::can_insert(std::int64_t id) const {
  if (position(id)) return true;
  const std::uint64_t start = home(id);
  for (std::uint64_t k = 0; k < probe_bound_; ++k) {
    if (buckets_[(start + k) & mask_].row == kEmptyRow) return true;
  }
  return false;
}

bool KeyIndex::insert(std::int64_t id, std::int64_t row) {
  PSTRAIN_ASSERT(row >= 0, "row ", row, " for id ", id);
  if (const auto b = position(id)) {
    buckets_[*b].row = row;
    return true;
  }
  // The first empty bucket of the run: every bucket before it is full, so the no-gap invariant (below) holds.
  const std::uint64_t start = home(id);
  for (std::uint64_t k = 0; k < probe_bound_; ++k) {
    KeyBucket& bucket = buckets_[(start + k) & mask_];
    if (bucket.row == kEmptyRow) {
      bucket = KeyBucket{id, row};
      ++size_;
      return true;
    }
  }
  return false;
}

// Backward-shift deletion keeps two invariants for every present id x at bucket p with home h:
//   (I1, within D) distance(h, p) < D;
//   (I2, no gaps)  every bucket from h to p is full.
// Erasing x empties bucket `hole`. Only entries after the hole in the same cluster (the full buckets up to the
// next empty one) can have the hole between their home and their bucket: any entry past that empty bucket has its
// home after it (by I2). Scanning the cluster, an entry y at bucket j with home h_y moves into the hole exactly
// when the hole lies in [h_y, j] (distance(h_y, j) >= distance(hole, j)); then the hole moves to j.
//  - I1: y moves from j to a bucket between h_y and j, so its distance to its home only shrinks; nothing else
//    moves. Distances never grow, so no entry ever leaves its run of D buckets.
//  - I2: an entry that stays has its home after the hole (in (hole, j]), so the hole is not on its path; an entry
//    that moves fills the hole, and the buckets from its home to the hole were full. The scan stops at an empty
//    bucket, past which no entry's path crosses the hole.
// The scan ends: the hole itself is empty, so at worst it stops after one turn of the table.
bool KeyIndex::erase(std::int64_t id) {
  const auto found = position(id);
  if (!found) return false;
  std::uint64_t hole = *found;
  buckets_[hole] = KeyBucket{0, kEmptyRow};
  --size_;
  for (std::uint64_t j = (hole + 1) & mask_; buckets_[j].row != kEmptyRow; j = (j + 1) & mask_) {
    const std::uint64_t h = home(buckets_[j].id);
    if (distance(h, j) >= distance(hole, j)) {
      buckets_[hole] = buckets_[j];
      buckets_[j] = KeyBucket{0, kEmptyRow};
      hole = j;
    }
  }
  return true;
}

}  // namespace pstrain::ps
