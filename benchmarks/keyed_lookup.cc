// keyed_lookup: how a trainer should resolve a batch's raw ids to rows of keyed tables on the servers (issue
// "Ids without a vocabulary", item 2), measured on the two ways the issue names, with pstrain's own index
// (lib/ps/key_index.h) on the servers. Run by keyed_lookup.sh under mpirun: ranks 0..S-1 servers, the rest
// trainers. Every step a trainer looks up, in each of --tables tables, the distinct ids of a batch (--ids-per-table,
// Zipf(1.1) over --universe ids, of which the first --held of each table are held by the servers: the rest fall
// on the default row), owned by server key_owner(id); it needs every held id's row (--width floats).
//   one-sided  (no server CPU on the path) per server: one MPI_Get of every id's run of D index buckets (an
//              indexed datatype over the runs, in one passive epoch), the runs searched on the trainer, then one
//              MPI_Get of the rows found (a second epoch): two round trips, two MPI calls, whatever the tables
//   request    per server: one message of the ids (all tables), the server finds each id in its index and answers
//              with one message of the rows found (and -1 for ids not held): one round trip, the server's CPU on it
// A step's lookups end when the trainer holds every row; the trainers then meet at a barrier with the servers
// (the sync step's meeting), so every step starts together. It prints "variant,ms_per_step" (the median over
// steps after a warm-up, on trainer S) and checks that both variants find the same rows.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/counter_random.h"
#include "ps/key_index.h"
#include "ps/keyed_rows.h"

namespace {

using pstrain::ps::KeyBucket;
using pstrain::ps::KeyIndex;

struct Options {
  std::string variant = "one-sided";
  int servers = 1;
  int tables = 26;
  int ids_per_table = 300;
  long universe = 1000000;
  long held = 200000;  // per table, over all servers
  int width = 16;
  int steps = 300;
  std::uint32_t probe_bound = 16;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--variant")
      o.variant = value;
    else if (flag == "--servers")
      o.servers = std::atoi(value);
    else if (flag == "--tables")
      o.tables = std::atoi(value);
    else if (flag == "--ids-per-table")
      o.ids_per_table = std::atoi(value);
    else if (flag == "--universe")
      o.universe = std::atol(value);
    else if (flag == "--held")
      o.held = std::atol(value);
    else if (flag == "--width")
      o.width = std::atoi(value);
    else if (flag == "--steps")
      o.steps = std::atoi(value);
    else if (flag == "--probe-bound")
      o.probe_bound = static_cast<std::uint32_t>(std::atoi(value));
    else {
      std::fprintf(stderr, "keyed_lookup: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

// Table t's id of rank r: distinct per table, spread over the 64-bit space as raw ids are.
std::int64_t table_id(int t, long r) {
  return static_cast<std::int64_t>(
      pstrain::mix64((static_cast<std::uint64_t>(t) << 40) ^ static_cast<std::uint64_t>(r)));
}

// One server's part of every table: its index (the window's buckets, table after table) and its rows.
struct ServerTables {
  std::uint64_t buckets_per_table = 0;
  std::span<KeyBucket> index;     // tables x buckets_per_table, in the index window
  std::span<float> rows;          // tables x capacity x width, in the rows window
  std::vector<KeyIndex> indexes;  // per table, over its part of `index`
  long capacity = 0;
};

std::uint64_t index_seed(int t) {
  return pstrain::ps::keyed_index_seed(7, static_cast<std::uint64_t>(t));
}

ServerTables build_server(const Options& o, int server, std::span<KeyBucket> index, std::span<float> rows) {
  ServerTables s;
  s.capacity = o.held / o.servers + 1;
  s.buckets_per_table = pstrain::ps::keyed_index_buckets(s.capacity);
  s.index = index;
  s.rows = rows;
  s.indexes.reserve(static_cast<std::size_t>(o.tables));
  for (int t = 0; t < o.tables; ++t) {
    s.indexes.emplace_back(s.index.subspan(t * s.buckets_per_table, s.buckets_per_table), o.probe_bound, index_seed(t));
    KeyIndex& index = s.indexes.back();
    long next_row = 0;
    for (long r = 0; r < o.held; ++r) {
      const std::int64_t id = table_id(t, r);
      if (pstrain::ps::key_owner(id, o.servers) != server || next_row >= s.capacity) continue;
      if (!index.insert(id, next_row)) continue;
      float* row = &s.rows[(static_cast<std::size_t>(t) * s.capacity + next_row) * o.width];
      for (int c = 0; c < o.width; ++c) row[c] = static_cast<float>(id % 1000) + static_cast<float>(c);
      ++next_row;
    }
  }
  return s;
}

// A batch's distinct ids of every table, Zipf(1.1) ranks, grouped by owning server: ids[server] = (table, id)...
struct Lookup {
  int table;
  std::int64_t id;
};
std::vector<std::vector<Lookup>> batch_ids(const Options& o, std::mt19937_64& random,
                                           const std::vector<double>& cumulative) {
  std::vector<std::vector<Lookup>> by_server(static_cast<std::size_t>(o.servers));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int t = 0; t < o.tables; ++t) {
    std::vector<long> ranks;
    for (int k = 0; k < o.ids_per_table; ++k) {
      ranks.push_back(std::lower_bound(cumulative.begin(), cumulative.end(), u(random)) - cumulative.begin());
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    for (long r : ranks) {
      const std::int64_t id = table_id(t, r);
      by_server[static_cast<std::size_t>(pstrain::ps::key_owner(id, o.servers))].push_back({t, id});
    }
  }
  return by_server;
}

std::vector<double> zipf_cumulative(long universe) {
  std::vector<double> c(static_cast<std::size_t>(universe));
  double sum = 0;
  for (long r = 0; r < universe; ++r) c[static_cast<std::size_t>(r)] = sum += 1.0 / std::pow(r + 1.0, 1.1);
  for (double& v : c) v /= sum;
  return c;
}

// one-sided: the runs, then the rows; rows found go to `out` in lookup order (absent: left as -1 in `found`).
void lookup_one_sided(const Options& o, int server, const std::vector<Lookup>& ids, std::uint64_t buckets_per_table,
                      long capacity, MPI_Win index_win, MPI_Win rows_win, std::vector<KeyBucket>& runs,
                      std::vector<std::int64_t>& found, std::vector<float>& out) {
  const std::uint64_t d = o.probe_bound;
  runs.resize(ids.size() * d);
  std::vector<int> lengths, at;
  for (const Lookup& l : ids) {
    const std::uint64_t home = pstrain::ps::key_home(l.id, index_seed(l.table), buckets_per_table);
    for (const auto& piece : pstrain::ps::run_pieces(home, d, buckets_per_table)) {
      if (piece.count == 0) continue;
      lengths.push_back(static_cast<int>(piece.count * sizeof(KeyBucket)));
      at.push_back(static_cast<int>((l.table * buckets_per_table + piece.first) * sizeof(KeyBucket)));
    }
  }
  MPI_Datatype target;
  MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), at.data(), MPI_BYTE, &target);
  MPI_Type_commit(&target);
  MPI_Win_lock(MPI_LOCK_SHARED, server, 0, index_win);
  MPI_Get(runs.data(), static_cast<int>(runs.size() * sizeof(KeyBucket)), MPI_BYTE, server, 0, 1, target, index_win);
  MPI_Win_unlock(server, index_win);
  MPI_Type_free(&target);

  found.assign(ids.size(), -1);
  std::vector<int> row_at;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const auto row = pstrain::ps::find_in_run(std::span(runs).subspan(k * d, d), ids[k].id);
    if (!row) continue;
    found[k] = *row;
    row_at.push_back(static_cast<int>((ids[k].table * capacity + *row) * o.width));
  }
  out.resize(row_at.size() * static_cast<std::size_t>(o.width));
  if (row_at.empty()) return;
  MPI_Datatype rows_type;
  MPI_Type_create_indexed_block(static_cast<int>(row_at.size()), o.width, row_at.data(), MPI_FLOAT, &rows_type);
  MPI_Type_commit(&rows_type);
  MPI_Win_lock(MPI_LOCK_SHARED, server, 0, rows_win);
  MPI_Get(out.data(), static_cast<int>(out.size()), MPI_FLOAT, server, 0, 1, rows_type, rows_win);
  MPI_Win_unlock(server, rows_win);
  MPI_Type_free(&rows_type);
}

// request: the ids out, the rows back (the answer: one int64 per id, then the rows found).
void lookup_request(const Options& o, int server, const std::vector<Lookup>& ids, std::vector<std::int64_t>& found,
                    std::vector<float>& out) {
  std::vector<std::int64_t> message(ids.size() * 2);
  for (std::size_t k = 0; k < ids.size(); ++k) {
    message[2 * k] = ids[k].table;
    message[2 * k + 1] = ids[k].id;
  }
  MPI_Send(message.data(), static_cast<int>(message.size()), MPI_INT64_T, server, 1, MPI_COMM_WORLD);
  found.resize(ids.size());
  MPI_Recv(found.data(), static_cast<int>(found.size()), MPI_INT64_T, server, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  const auto held = std::count_if(found.begin(), found.end(), [](std::int64_t r) { return r >= 0; });
  out.resize(static_cast<std::size_t>(held) * o.width);
  MPI_Recv(out.data(), static_cast<int>(out.size()), MPI_FLOAT, server, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// The server's side of `request`: answers one request per trainer per step, in arrival order, until the step's
// barrier (it knows how many requests a step brings: one per trainer).
void serve_requests(const Options& o, const ServerTables& s, int trainers) {
  std::vector<std::int64_t> message, found;
  std::vector<float> rows;
  for (int step = 0; step < o.steps; ++step) {
    for (int k = 0; k < trainers; ++k) {
      MPI_Status status;
      MPI_Probe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &status);
      int count = 0;
      MPI_Get_count(&status, MPI_INT64_T, &count);
      message.resize(static_cast<std::size_t>(count));
      MPI_Recv(message.data(), count, MPI_INT64_T, status.MPI_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      found.assign(message.size() / 2, -1);
      rows.clear();
      for (std::size_t j = 0; j < found.size(); ++j) {
        const int table = static_cast<int>(message[2 * j]);
        const auto row = s.indexes[static_cast<std::size_t>(table)].find(message[2 * j + 1]);
        if (!row) continue;
        found[j] = *row;
        const float* values = &s.rows[(static_cast<std::size_t>(table) * s.capacity + *row) * o.width];
        rows.insert(rows.end(), values, values + o.width);
      }
      MPI_Send(found.data(), static_cast<int>(found.size()), MPI_INT64_T, status.MPI_SOURCE, 2, MPI_COMM_WORLD);
      MPI_Send(rows.data(), static_cast<int>(rows.size()), MPI_FLOAT, status.MPI_SOURCE, 3, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Options o = parse(argc, argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool server = rank < o.servers;
  const long capacity = o.held / o.servers + 1;
  const std::uint64_t buckets_per_table = pstrain::ps::keyed_index_buckets(capacity);
  // Windows from MPI_Win_allocate, as pstrain's (comm/window.h): on one node that is osc/sm's direct shared memory.
  const std::size_t buckets = server ? buckets_per_table * static_cast<std::size_t>(o.tables) : 0;
  const std::size_t floats = server ? static_cast<std::size_t>(o.tables) * capacity * o.width : 0;
  MPI_Win index_win, rows_win;
  KeyBucket* index_memory = nullptr;
  float* rows_memory = nullptr;
  MPI_Win_allocate(static_cast<MPI_Aint>(buckets * sizeof(KeyBucket)), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &index_memory,
                   &index_win);
  MPI_Win_allocate(static_cast<MPI_Aint>(floats * sizeof(float)), sizeof(float), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &rows_memory, &rows_win);
  ServerTables tables;
  if (server) tables = build_server(o, rank, {index_memory, buckets}, {rows_memory, floats});
  MPI_Barrier(MPI_COMM_WORLD);
  const bool one_sided = o.variant == "one-sided";
  if (server) {
    if (one_sided) {
      for (int step = 0; step < o.steps; ++step) MPI_Barrier(MPI_COMM_WORLD);
    } else {
      serve_requests(o, tables, size - o.servers);
    }
  } else {
    std::mt19937_64 random(static_cast<std::uint64_t>(rank));
    const std::vector<double> cumulative = zipf_cumulative(o.universe);
    std::vector<KeyBucket> runs;
    std::vector<std::int64_t> found;
    std::vector<float> out;
    std::vector<double> ms;
    long rows_found = 0, lookups = 0;
    for (int step = 0; step < o.steps; ++step) {
      const auto ids = batch_ids(o, random, cumulative);
      const auto start = std::chrono::steady_clock::now();
      for (int s = 0; s < o.servers; ++s) {
        const auto& mine = ids[static_cast<std::size_t>(s)];
        if (one_sided)
          lookup_one_sided(o, s, mine, buckets_per_table, capacity, index_win, rows_win, runs, found, out);
        else
          lookup_request(o, s, mine, found, out);
        lookups += static_cast<long>(mine.size());
        rows_found += static_cast<long>(out.size()) / o.width;
        // Every row found holds its id's pattern (build_server): a wrong row would show here.
        std::size_t k = 0;
        for (std::size_t j = 0; j < mine.size(); ++j) {
          if (found[j] < 0) continue;
          if (out[k * o.width] != static_cast<float>(mine[j].id % 1000)) {
            std::fprintf(stderr, "keyed_lookup: wrong row for id %lld\n", static_cast<long long>(mine[j].id));
            MPI_Abort(MPI_COMM_WORLD, 1);
          }
          ++k;
        }
      }
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == o.servers) {
      std::vector<double> timed(ms.begin() + std::min<std::size_t>(ms.size() / 5, 50), ms.end());
      std::nth_element(timed.begin(), timed.begin() + timed.size() / 2, timed.end());
      std::printf("%s,%.4f,%.1f,%.3f\n", o.variant.c_str(), timed[timed.size() / 2],
                  static_cast<double>(lookups) / o.steps, static_cast<double>(rows_found) / lookups);
    }
  }
  MPI_Win_free(&rows_win);
  MPI_Win_free(&index_win);
  MPI_Finalize();
  return 0;
}
