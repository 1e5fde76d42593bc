// The keyed tables' id -> row index: the same answers as std::unordered_map under long random use, every id
// within its run of D buckets after every operation (what one-sided readers rely on), and runs fetched in one
// or two pieces resolving ids as the server does.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "ps/key_index.h"

namespace pstrain::ps {
namespace {

// Every present id within D buckets of its home (I1), no empty bucket between its home and it (I2), ids distinct.
void expect_invariants(const KeyIndex& index) {
  const auto buckets = index.buckets();
  const std::uint64_t n = buckets.size();
  std::unordered_map<std::int64_t, int> seen;
  for (std::uint64_t b = 0; b < n; ++b) {
    if (buckets[b].row == kEmptyRow) continue;
    const std::uint64_t home = index.home(buckets[b].id);
    const std::uint64_t distance = (b - home) & (n - 1);
    ASSERT_LT(distance, index.probe_bound()) << "id " << buckets[b].id << " at bucket " << b << ", home " << home;
    for (std::uint64_t k = 0; k < distance; ++k) {
      ASSERT_NE(buckets[(home + k) & (n - 1)].row, kEmptyRow) << "gap before id " << buckets[b].id;
    }
    ASSERT_EQ(++seen[buckets[b].id], 1) << "id " << buckets[b].id << " twice";
  }
  ASSERT_EQ(seen.size(), index.size());
}

// What a trainer does: fetch the D buckets from the id's home as run_pieces says, then look in them.
std::optional<std::int64_t> remote_find(const KeyIndex& index, std::int64_t id) {
  std::vector<KeyBucket> run;
  for (const BucketPiece& piece : run_pieces(index.home(id), index.probe_bound(), index.bucket_count())) {
    const auto source = index.buckets().subspan(piece.first, piece.count);
    run.insert(run.end(), source.begin(), source.end());
  }
  EXPECT_EQ(run.size(), index.probe_bound());
  return find_in_run(run, id);
}

// Ids of `count` distinct values whose home is `home`.
std::vector<std::int64_t> ids_with_home(const KeyIndex& index, std::uint64_t home, std::size_t count) {
  std::vector<std::int64_t> ids;
  for (std::int64_t id = 0; ids.size() < count; ++id) {
    if (index.home(id) == home) ids.push_back(id);
  }
  return ids;
}

TEST(KeyIndex, LongRandomInsertEraseAgreesWithUnorderedMapAndKeepsEveryIdWithinItsRun) {
  std::vector<KeyBucket> memory(256);
  KeyIndex index(memory, 8, 42);
  std::unordered_map<std::int64_t, std::int64_t> reference;
  std::mt19937_64 engine(3);
  int refusals = 0;
  for (int op = 0; op < 20000; ++op) {
    const auto id = static_cast<std::int64_t>(engine() % 600) - 300;  // negative ids too
    if (engine() % 100 < 55) {
      const auto row = static_cast<std::int64_t>(engine() % 1000);
      const bool room = index.can_insert(id);
      const bool inserted = index.insert(id, row);
      ASSERT_EQ(room, inserted);
      if (inserted) {
        reference[id] = row;
      } else {
        ++refusals;
        ASSERT_EQ(reference.count(id), 0u);
      }
    } else {
      ASSERT_EQ(index.erase(id), reference.erase(id) == 1);
    }
    expect_invariants(index);
    ASSERT_EQ(index.size(), reference.size());
    for (const auto& [key, row] : reference) ASSERT_EQ(index.find(key), std::optional(row)) << "id " << key;
    if (op % 97 == 0) {
      for (std::int64_t probe = -300; probe < 300; ++probe) {
        const auto it = reference.find(probe);
        const auto expected = it == reference.end() ? std::nullopt : std::optional(it->second);
        ASSERT_EQ(index.find(probe), expected) << "id " << probe;
        ASSERT_EQ(remote_find(index, probe), expected) << "id " << probe;
      }
    }
  }
  EXPECT_GT(refusals, 0) << "the sequence never filled a run: it did not test refusals";
  EXPECT_GT(reference.size(), 64u) << "the sequence kept the index too empty to test clustering";
}

TEST(KeyIndex, RunPiecesSplitOnlyWhenTheRunPassesTheEnd) {
  const auto inside = run_pieces(3, 4, 16);
  EXPECT_EQ(inside[0].first, 3u);
  EXPECT_EQ(inside[0].count, 4u);
  EXPECT_EQ(inside[1].count, 0u);
  const auto wrapped = run_pieces(14, 4, 16);
  EXPECT_EQ(wrapped[0].first, 14u);
  EXPECT_EQ(wrapped[0].count, 2u);
  EXPECT_EQ(wrapped[1].first, 0u);
  EXPECT_EQ(wrapped[1].count, 2u);
  const auto whole = run_pieces(0, 16, 16);
  EXPECT_EQ(whole[0].count, 16u);
  EXPECT_EQ(whole[1].count, 0u);
}

TEST(KeyIndex, FindInRunResolvesIdsWhoseRunWrapsAroundTheEnd) {
  std::vector<KeyBucket> memory(16);
  KeyIndex index(memory, 4, 7);
  const auto ids = ids_with_home(index, 15, 4);  // buckets 15, 0, 1, 2
  for (std::size_t k = 0; k < ids.size(); ++k) ASSERT_TRUE(index.insert(ids[k], static_cast<std::int64_t>(k) + 10));
  EXPECT_EQ(memory[15].id, ids[0]);
  EXPECT_EQ(memory[2].id, ids[3]);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(remote_find(index, ids[k]), std::optional<std::int64_t>(static_cast<std::int64_t>(k) + 10));
  }
  const auto absent = ids_with_home(index, 15, 5).back();
  EXPECT_EQ(remote_find(index, absent), std::nullopt);
  // A run that holds the id's bucket but not from the home on: only the caller's fetch decides the run.
  EXPECT_EQ(find_in_run(std::span<const KeyBucket>(memory).subspan(0, 3), ids[3]), std::optional<std::int64_t>(13));
}

TEST(KeyIndex, InsertIsRefusedWhenTheRunIsFullAndChangesNothing) {
  std::vector<KeyBucket> memory(64);
  KeyIndex index(memory, 4, 11);
  const auto ids = ids_with_home(index, 20, 5);
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(index.insert(ids[static_cast<std::size_t>(k)], k));
  const std::vector<KeyBucket> before = memory;
  EXPECT_FALSE(index.can_insert(ids[4]));
  EXPECT_FALSE(index.insert(ids[4], 4));
  EXPECT_EQ(index.size(), 4u);
  for (std::size_t b = 0; b < memory.size(); ++b) {
    EXPECT_EQ(memory[b].id, before[b].id);
    EXPECT_EQ(memory[b].row, before[b].row);
  }
  EXPECT_TRUE(index.insert(ids[0], 9)) << "a present id's row is updated even with a full run";
  EXPECT_EQ(index.find(ids[0]), std::optional<std::int64_t>(9));
  ASSERT_TRUE(index.erase(ids[1]));
  EXPECT_TRUE(index.insert(ids[4], 4));
  expect_invariants(index);
}

TEST(KeyIndex, LoadTakesAnotherIndexsBucketsAndCountsItsIds) {
  std::vector<KeyBucket> memory(64), copy(64);
  KeyIndex index(memory, 4, 11);
  for (std::int64_t id = 100; id < 120; ++id) ASSERT_TRUE(index.insert(id, id - 100));
  ASSERT_TRUE(index.erase(105));
  KeyIndex loaded(copy, 4, 11);
  loaded.load(memory);
  EXPECT_EQ(loaded.size(), index.size());
  for (std::int64_t id = 95; id < 125; ++id) EXPECT_EQ(loaded.find(id), index.find(id)) << id;
  expect_invariants(loaded);
}

TEST(KeyIndex, EraseShiftsLaterEntriesTowardTheirHome) {
  std::vector<KeyBucket> memory(32);
  KeyIndex index(memory, 8, 5);
  const auto ids = ids_with_home(index, 10, 3);  // buckets 10, 11, 12
  for (const auto id : ids) ASSERT_TRUE(index.insert(id, id));
  ASSERT_TRUE(index.erase(ids[0]));
  EXPECT_EQ(memory[10].id, ids[1]);
  EXPECT_EQ(memory[11].id, ids[2]);
  EXPECT_EQ(memory[12].row, kEmptyRow);
  EXPECT_FALSE(index.erase(ids[0]));
  expect_invariants(index);
}

TEST(KeyIndex, SameOperationsGiveTheSameBuckets) {
  std::vector<KeyBucket> a(128);
  std::vector<KeyBucket> b(128);
  KeyIndex first(a, 16, 99);
  KeyIndex second(b, 16, 99);
  std::mt19937_64 engine(1);
  for (int op = 0; op < 3000; ++op) {
    const auto id = static_cast<std::int64_t>(engine() % 200);
    if (engine() % 2 == 0) {
      EXPECT_EQ(first.insert(id, op), second.insert(id, op));
    } else {
      EXPECT_EQ(first.erase(id), second.erase(id));
    }
  }
  for (std::size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].row, b[k].row);
    if (a[k].row != kEmptyRow) {
      EXPECT_EQ(a[k].id, b[k].id);
    }
  }
}

TEST(KeyIndex, BadGeometryIsAUsageError) {
  std::vector<KeyBucket> memory(24);
  EXPECT_THROW(KeyIndex(memory, 4, 0), Error);
  std::vector<KeyBucket> small(8);
  EXPECT_THROW(KeyIndex(small, 9, 0), Error);
  EXPECT_THROW(KeyIndex(small, 0, 0), Error);
}

}  // namespace
}  // namespace pstrain::ps
