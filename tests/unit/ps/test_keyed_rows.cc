// One keyed table's rows on one server: admission after N sightings and by a draw that ignores arrival order,
// eviction by recency at the cap (never a row seen at this meeting) and by TTL, a ceiling on rows under a long
// stream with counters that add up, checkpoints that restore the same lookups and the same future, and the
// elastic deal of entries onto another number of servers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "core/error.h"
#include "ps/keyed_rows.h"

namespace pstrain::ps {
namespace {

KeyedRowsPolicy policy_of(std::uint32_t admit_after, double probability, std::int64_t ttl) {
  return KeyedRowsPolicy{admit_after, probability, ttl, 1234, 3};
}

KeyedRowsLayout layout_of(std::int64_t capacity) {
  return KeyedRowsLayout{capacity, 16, 4, 4096};
}

std::vector<std::int64_t> ids_of(const std::vector<RowChange>& changes) {
  std::vector<std::int64_t> ids;
  for (const RowChange& change : changes) ids.push_back(change.id);
  return ids;
}

// A skewed stream of meetings: `meetings` lists of `per_meeting` ids from a universe of `universe`.
std::vector<std::vector<std::int64_t>> random_meetings(int meetings, int per_meeting, int universe,
                                                       std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<std::vector<std::int64_t>> result(static_cast<std::size_t>(meetings));
  for (auto& ids : result) {
    for (int k = 0; k < per_meeting; ++k) {
      const double u = std::uniform_real_distribution<double>(0.0, 1.0)(engine);
      ids.push_back(static_cast<std::int64_t>(std::pow(u, 3.0) * universe) * 7919 - 50000);  // low ranks frequent
    }
  }
  return result;
}

TEST(KeyedRows, AdmitAfterThreeAdmitsAtTheThirdSighting) {
  KeyedRows rows(layout_of(8), policy_of(3, 1.0, 0));
  EXPECT_TRUE(rows.meet(std::vector<std::int64_t>{5}, 1).admitted.empty());
  EXPECT_TRUE(rows.meet(std::vector<std::int64_t>{5}, 2).admitted.empty());
  EXPECT_EQ(rows.lookup(5), std::nullopt);
  const MeetingOutcome third = rows.meet(std::vector<std::int64_t>{5}, 3);
  EXPECT_EQ(third.admitted, (std::vector<RowChange>{{0, 5}}));
  EXPECT_EQ(rows.lookup(5), std::optional<std::int64_t>(0));
  // Within one meeting: admitted at the third sighting, the fourth touches the new row.
  const MeetingOutcome same = rows.meet(std::vector<std::int64_t>{9, 9, 9, 9}, 4);
  EXPECT_EQ(same.admitted, (std::vector<RowChange>{{1, 9}}));
  const auto entries = rows.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1], (KeyedEntry{9, 1, 4, 2}));
}

TEST(KeyedRows, AdmissionDrawAdmitsTheSameIdsWhateverTheArrivalOrder) {
  std::vector<std::int64_t> ids;
  for (std::int64_t id = 0; id < 1000; ++id) ids.insert(ids.end(), {id * 31, id * 31});  // seen twice each
  std::vector<std::int64_t> shuffled = ids;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(9));
  KeyedRows first(layout_of(4000), policy_of(2, 0.5, 0));
  KeyedRows second(layout_of(4000), policy_of(2, 0.5, 0));
  auto a = ids_of(first.meet(ids, 1).admitted);
  auto b = ids_of(second.meet(shuffled, 1).admitted);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_GT(a.size(), 400u) << "the draw should admit about half";
  EXPECT_LT(a.size(), 600u) << "the draw should admit about half";
  for (const auto id : a) EXPECT_TRUE(passes_admission_draw(1234, 3, id, 0.5)) << "id " << id;
}

TEST(KeyedRows, AtTheCapTheLeastRecentlyUsedRowIsEvictedWithTiesById) {
  KeyedRows rows(layout_of(3), policy_of(1, 1.0, 0));
  rows.meet(std::vector<std::int64_t>{30}, 1);
  rows.meet(std::vector<std::int64_t>{20, 10}, 2);  // 10 and 20 tie at step 2
  const auto row_of = [&](std::int64_t id) { return *rows.lookup(id); };
  const std::int64_t row30 = row_of(30);
  const std::int64_t row10 = row_of(10);
  const std::int64_t row20 = row_of(20);
  MeetingOutcome outcome = rows.meet(std::vector<std::int64_t>{40}, 3);
  EXPECT_EQ(outcome.evicted, (std::vector<RowChange>{{row30, 30}}));
  EXPECT_EQ(outcome.admitted, (std::vector<RowChange>{{row30, 40}}));
  outcome = rows.meet(std::vector<std::int64_t>{50}, 4);
  EXPECT_EQ(outcome.evicted, (std::vector<RowChange>{{row10, 10}}));
  outcome = rows.meet(std::vector<std::int64_t>{60}, 5);
  EXPECT_EQ(outcome.evicted, (std::vector<RowChange>{{row20, 20}}));
  EXPECT_EQ(rows.lookup(10), std::nullopt);
  EXPECT_EQ(rows.rows_held(), 3);
  EXPECT_EQ(rows.evicted(), 3u);
}

TEST(KeyedRows, ARowSeenAtThisMeetingIsNeverEvicted) {
  KeyedRows rows(layout_of(2), policy_of(1, 1.0, 0));
  MeetingOutcome outcome = rows.meet(std::vector<std::int64_t>{1, 2, 3}, 1);
  EXPECT_EQ(ids_of(outcome.admitted), (std::vector<std::int64_t>{1, 2}));
  EXPECT_TRUE(outcome.evicted.empty());
  EXPECT_EQ(outcome.refused, 1u);
  EXPECT_EQ(rows.refused(), 1u);
  EXPECT_EQ(rows.lookup(3), std::nullopt);
  outcome = rows.meet(std::vector<std::int64_t>{1, 4}, 2);  // 1 is seen now: 2 goes
  EXPECT_EQ(ids_of(outcome.evicted), (std::vector<std::int64_t>{2}));
  outcome = rows.meet(std::vector<std::int64_t>{5, 6, 7}, 3);  // 5 evicts 1 (tie with 4, lower id), 6 evicts 4
  EXPECT_EQ(ids_of(outcome.evicted), (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(ids_of(outcome.admitted), (std::vector<std::int64_t>{5, 6}));
  EXPECT_EQ(outcome.refused, 1u);
  // A second meeting at the same step keeps the rows of the first.
  outcome = rows.meet(std::vector<std::int64_t>{8}, 3);
  EXPECT_TRUE(outcome.admitted.empty());
  EXPECT_TRUE(rows.lookup(5) && rows.lookup(6));
}

TEST(KeyedRows, RowsUnseenForMoreThanTtlStepsExpire) {
  KeyedRows rows(layout_of(8), policy_of(1, 1.0, 2));
  rows.meet(std::vector<std::int64_t>{1, 2}, 1);
  rows.meet(std::vector<std::int64_t>{2}, 2);
  EXPECT_TRUE(rows.meet({}, 3).expired.empty());  // 1 last seen at 1 = 3 - 2: kept
  EXPECT_EQ(ids_of(rows.meet({}, 4).expired), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(rows.lookup(1), std::nullopt);
  EXPECT_EQ(ids_of(rows.meet({}, 5).expired), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(rows.rows_held(), 0);
  KeyedRows forever(layout_of(8), policy_of(1, 1.0, 0));
  forever.meet(std::vector<std::int64_t>{1}, 1);
  EXPECT_TRUE(forever.meet({}, 1000000).expired.empty());
  EXPECT_EQ(forever.rows_held(), 1);
}

TEST(KeyedRows, RowsHeldNeverExceedCapacityAndCountersAddUpOverALongStream) {
  const std::int64_t capacity = 100;
  KeyedRows rows(layout_of(capacity), policy_of(2, 0.8, 20));
  std::uint64_t admitted = 0;
  std::uint64_t evicted = 0;
  std::uint64_t refused = 0;
  std::int64_t step = 0;
  for (const auto& ids : random_meetings(500, 60, 5000, 4)) {
    const MeetingOutcome outcome = rows.meet(ids, ++step);
    admitted += outcome.admitted.size();
    evicted += outcome.evicted.size() + outcome.expired.size();
    refused += outcome.refused;
    ASSERT_LE(rows.rows_held(), capacity);
    ASSERT_EQ(static_cast<std::int64_t>(rows.admitted() - rows.evicted()), rows.rows_held());
    ASSERT_EQ(rows.index().size(), static_cast<std::uint64_t>(rows.rows_held()));
    for (const RowChange& change : outcome.admitted) ASSERT_EQ(rows.lookup(change.id), change.row);
    std::set<std::int64_t> used;
    for (const KeyedEntry& entry : rows.entries()) {
      ASSERT_EQ(rows.lookup(entry.id), entry.row);
      ASSERT_TRUE(used.insert(entry.row).second) << "row " << entry.row << " held twice";
      ASSERT_GE(entry.last_seen, step - 20);
    }
  }
  EXPECT_EQ(rows.admitted(), admitted);
  EXPECT_EQ(rows.evicted(), evicted);
  EXPECT_EQ(rows.refused(), refused);
  EXPECT_GT(evicted, 0u);
  EXPECT_EQ(rows.rows_held(), capacity) << "a skewed stream should keep the table full";
  EXPECT_GT(rows.bytes(), rows.sketch().bytes() + rows.index().bucket_count() * sizeof(KeyBucket));
}

TEST(KeyedRows, EntriesRestoreRoundTripGivesTheSameLookupsAndTheSameFuture) {
  const auto meetings = random_meetings(300, 40, 3000, 5);
  KeyedRows original(layout_of(64), policy_of(2, 1.0, 30));
  std::int64_t step = 0;
  for (std::size_t k = 0; k < 150; ++k) original.meet(meetings[k], ++step);
  original.add_default_lookups(7);
  const auto entries = original.entries();
  ASSERT_TRUE(std::is_sorted(entries.begin(), entries.end(),
                             [](const KeyedEntry& a, const KeyedEntry& b) { return a.id < b.id; }));
  KeyedRows restored(layout_of(64), policy_of(2, 1.0, 30));
  const std::vector<std::uint16_t> sketch(original.sketch().counters().begin(), original.sketch().counters().end());
  EXPECT_TRUE(restored.restore(entries, sketch, original.counters()).empty());
  const auto back = restored.entries();
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t k = 0; k < back.size(); ++k) {
    EXPECT_EQ(back[k].row, static_cast<std::int64_t>(k)) << "rows renumbered in id order";
    EXPECT_EQ((KeyedEntry{back[k].id, 0, back[k].last_seen, back[k].count}),
              (KeyedEntry{entries[k].id, 0, entries[k].last_seen, entries[k].count}));
  }
  EXPECT_EQ(restored.default_lookups(), 7u);
  EXPECT_EQ(restored.admitted(), original.admitted());
  for (const auto& ids : meetings) {
    for (const auto id : ids) EXPECT_EQ(restored.lookup(id).has_value(), original.lookup(id).has_value());
  }
  for (std::size_t k = 150; k < meetings.size(); ++k) {  // the same ids admitted and evicted from here on
    ++step;
    const MeetingOutcome a = original.meet(meetings[k], step);
    const MeetingOutcome b = restored.meet(meetings[k], step);
    ASSERT_EQ(ids_of(a.admitted), ids_of(b.admitted)) << "step " << step;
    ASSERT_EQ(ids_of(a.evicted), ids_of(b.evicted)) << "step " << step;
    ASSERT_EQ(ids_of(a.expired), ids_of(b.expired)) << "step " << step;
  }
}

// A probe bound of 2 fills index runs, so some ids are refused for want of a bucket: which ones depends on where
// earlier ids sit. restore_exactly keeps the buckets, rows and all, so the future is the uninterrupted one's
// outcome for outcome, refusals included.
TEST(KeyedRows, RestoreExactlyKeepsTheIndexSoRefusalsAndRowsRepeat) {
  const auto meetings = random_meetings(300, 40, 3000, 11);
  const KeyedRowsLayout tight{64, 2, 4, 4096};
  KeyedRows original(tight, policy_of(1, 1.0, 25));
  std::int64_t step = 0;
  for (std::size_t k = 0; k < 150; ++k) original.meet(meetings[k], ++step);
  ASSERT_GT(original.refused(), 0u) << "the test needs refusals to tell the restores apart";
  KeyedRows restored(tight, policy_of(1, 1.0, 25));
  const std::vector<std::uint16_t> sketch(original.sketch().counters().begin(), original.sketch().counters().end());
  restored.restore_exactly(original.entries(), sketch, original.counters(), original.index().buckets());
  ASSERT_EQ(restored.entries(), original.entries());
  for (std::size_t k = 150; k < meetings.size(); ++k) {
    ++step;
    const MeetingOutcome a = original.meet(meetings[k], step);
    const MeetingOutcome b = restored.meet(meetings[k], step);
    ASSERT_EQ(a.admitted, b.admitted) << "step " << step;
    ASSERT_EQ(a.evicted, b.evicted) << "step " << step;
    ASSERT_EQ(a.expired, b.expired) << "step " << step;
    ASSERT_EQ(a.refused, b.refused) << "step " << step;
  }
  EXPECT_EQ(restored.entries(), original.entries());
  EXPECT_EQ(restored.counters().evicted, original.counters().evicted);
}

TEST(KeyedRows, RestoreExactlyRefusesEntriesTheIndexDoesNotHold) {
  KeyedRows original(layout_of(8), policy_of(1, 1.0, 0));
  original.meet(std::vector<std::int64_t>{1, 2, 3}, 1);
  const std::vector<std::uint16_t> sketch(original.sketch().counters().begin(), original.sketch().counters().end());
  auto entries = original.entries();
  entries[0].row = entries[1].row;  // id 1 given id 2's row
  KeyedRows restored(layout_of(8), policy_of(1, 1.0, 0));
  EXPECT_THROW(restored.restore_exactly(entries, sketch, original.counters(), original.index().buckets()), Error);
  const std::vector<KeyBucket> short_index(original.index().buckets().begin(), original.index().buckets().end() - 1);
  EXPECT_THROW(restored.restore_exactly(original.entries(), sketch, original.counters(), short_index), Error);
}

TEST(KeyedRows, RestoreRefusesUnorderedIdsTooManyRowsAndAWrongSketch) {
  KeyedRows rows(layout_of(2), policy_of(1, 1.0, 0));
  const std::vector<std::uint16_t> sketch(4 * 4096, 0);
  const std::vector<KeyedEntry> unordered{{5, 0, 1, 1}, {3, 1, 1, 1}};
  EXPECT_THROW(rows.restore(unordered, sketch, {}), Error);
  const std::vector<KeyedEntry> too_many{{1, 0, 1, 1}, {2, 1, 1, 1}, {3, 2, 1, 1}};
  EXPECT_THROW(rows.restore(too_many, sketch, {}), Error);
  const std::vector<KeyedEntry> good{{1, 0, 1, 1}};
  EXPECT_THROW(rows.restore(good, std::vector<std::uint16_t>(5), {}), Error);
  EXPECT_TRUE(rows.restore(good, sketch, {}).empty());
  EXPECT_EQ(rows.lookup(1), std::optional<std::int64_t>(0));
}

TEST(KeyedRows, DealToFewerServersKeepsTheMostRecentWithinTheCapOnEachIdsOwner) {
  std::vector<KeyedEntry> all;  // three old servers' entries, with many ties in last_seen
  std::mt19937_64 engine(6);
  for (std::int64_t id = 0; id < 300; ++id) {
    all.push_back(KeyedEntry{id * 1000003, id % 100, static_cast<std::int64_t>(engine() % 20), 1});
  }
  const std::int64_t capacity = 60;
  std::set<std::int64_t> kept_ids;
  for (int server = 0; server < 2; ++server) {
    const auto kept = deal_entries(all, 2, server, capacity);
    std::vector<KeyedEntry> owned;
    for (const KeyedEntry& entry : all) {
      if (key_owner(entry.id, 2) == server) owned.push_back(entry);
    }
    ASSERT_GT(owned.size(), static_cast<std::size_t>(capacity)) << "the test should overfill each server";
    std::sort(owned.begin(), owned.end(), [](const KeyedEntry& a, const KeyedEntry& b) {
      return a.last_seen != b.last_seen ? a.last_seen > b.last_seen : a.id > b.id;
    });
    owned.resize(static_cast<std::size_t>(capacity));
    std::sort(owned.begin(), owned.end(), [](const KeyedEntry& a, const KeyedEntry& b) { return a.id < b.id; });
    EXPECT_EQ(kept, owned) << "server " << server;
    for (const KeyedEntry& entry : kept) {
      EXPECT_EQ(key_owner(entry.id, 2), server);
      EXPECT_TRUE(kept_ids.insert(entry.id).second);
    }
    KeyedRows rows(layout_of(capacity), policy_of(1, 1.0, 0));
    EXPECT_TRUE(rows.restore(kept, std::vector<std::uint16_t>(4 * 4096), {}).empty());
    EXPECT_EQ(rows.rows_held(), capacity);
  }
  EXPECT_EQ(deal_entries(all, 1, 0, 1000).size(), all.size()) << "one roomy server keeps everything";
}

TEST(KeyedRows, KeyOwnerSpreadsConsecutiveIdsOverServers) {
  std::map<int, int> per_server;
  for (std::int64_t id = 0; id < 10000; ++id) {
    const int owner = key_owner(id, 4);
    ASSERT_GE(owner, 0);
    ASSERT_LT(owner, 4);
    ++per_server[owner];
  }
  for (const auto& [server, count] : per_server) {
    EXPECT_GT(count, 2200) << "server " << server;
    EXPECT_LT(count, 2800) << "server " << server;
  }
}

TEST(KeyedRows, FirstValuesDependOnlyOnSeedTableAndId) {
  std::vector<float> a(64);
  std::vector<float> b(64);
  first_values(1, 2, 42, a, 0.05f);
  first_values(1, 2, 42, b, 0.05f);
  EXPECT_EQ(a, b);
  for (const float v : a) {
    EXPECT_GE(v, -0.05f);
    EXPECT_LT(v, 0.05f);
  }
  first_values(1, 2, 43, b, 0.05f);
  EXPECT_NE(a, b);
  first_values(1, 3, 42, b, 0.05f);
  EXPECT_NE(a, b);
}

TEST(KeyedRows, ATrainerReadingTheIndexMemoryFindsWhatLookupFinds) {
  const std::int64_t capacity = 500;
  std::vector<KeyBucket> window(keyed_index_buckets(capacity));
  const KeyedRowsLayout layout{capacity, 8, 4, 4096};
  KeyedRows rows(layout, policy_of(1, 1.0, 0), window);
  std::int64_t step = 0;
  for (const auto& ids : random_meetings(100, 50, 4000, 8)) rows.meet(ids, ++step);
  const std::uint64_t seed = keyed_index_seed(1234, 3);
  for (std::int64_t id = -50000; id < 4000 * 7919; id += 7919) {
    std::vector<KeyBucket> run;
    for (const BucketPiece& piece : run_pieces(key_home(id, seed, window.size()), 8, window.size())) {
      run.insert(run.end(), window.begin() + static_cast<std::ptrdiff_t>(piece.first),
                 window.begin() + static_cast<std::ptrdiff_t>(piece.first + piece.count));
    }
    ASSERT_EQ(find_in_run(run, id), rows.lookup(id)) << "id " << id;
  }
  EXPECT_THROW(KeyedRows(layout, policy_of(1, 1.0, 0), std::span(window).subspan(1)), Error);
  EXPECT_THROW(KeyedRows(KeyedRowsLayout{0, 8, 4, 16}, policy_of(1, 1.0, 0)), Error);
}

}  // namespace
}  // namespace pstrain::ps
