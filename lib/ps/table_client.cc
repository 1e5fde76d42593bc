#include "ps/table_client.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "comm/datatype.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/timing.h"

namespace pstrain::ps {

namespace {

int as_displacement(std::uint64_t value, const std::string& table) {
  PSTRAIN_ASSERT(value <= static_cast<std::uint64_t>(std::numeric_limits<int>::max()), "table ", table,
                 " too large for int displacements: ", value);
  return static_cast<int>(value);
}

}  // namespace

TableClient::TableClient(std::vector<TableWindows>& windows, const TablePlan& plan, std::vector<RowCache> caches,
                         const comm::WorldLayout& layout)
    : windows_(windows), plan_(plan), caches_(std::move(caches)), layout_(layout), requests_(plan.size()) {
  PSTRAIN_ASSERT(windows.size() == plan.size(), windows.size(), " table windows for ", plan.size(), " tables");
  PSTRAIN_ASSERT(caches_.size() == plan.size(), caches_.size(), " row caches for ", plan.size(), " tables");
}

RowRequest TableClient::request_for(std::size_t t, std::span<float> features, std::size_t count) {
  const TableSpec& table = plan_.table(t);
  const std::size_t lookups = count * table.ids_per_sample;
  PSTRAIN_ASSERT(features.size() >= lookups, features.size(), " features for ", lookups, " lookups");
  ids_.resize(lookups);
  for (std::size_t k = 0; k < lookups; ++k) {
    const float value = features[k];
    ids_[k] = static_cast<std::int64_t>(value);
    if (!(static_cast<float>(ids_[k]) == value)) {
      throw Error(ExitCode::kInputData, cat("table ", table.name, ": lookup ", k, " of the batch reads ", value,
                                            ", which is not an integer id"));
    }
  }
  RowRequest request = make_row_request(ids_, plan_.rows(t));
  PSTRAIN_ASSERT(request.rows.size() <= caches_[t].rows, request.rows.size(), " rows for a cache of ", caches_[t].rows);
  return request;
}

void TableClient::get_rows(std::size_t t, const RowRequest& request, std::span<float> parameters) {
  const TableSpec& table = plan_.table(t);
  const RowPlan& rows = plan_.rows(t);
  const int width = static_cast<int>(table.width);
  std::vector<comm::Datatype> types;  // alive until the epoch completes
  const MPI_Win window = windows_[t].rows.handle();
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < rows.shards(); ++shard) {
    const auto wanted = request.rows_of(shard);
    if (wanted.empty()) continue;
    std::vector<int> at_target;
    for (const std::uint64_t row : wanted) {
      at_target.push_back(as_displacement(rows.local_index(row) * table.width, table.name));
    }
    types.push_back(comm::Datatype::indexed_block_floats(width, at_target));
    // A shard's rows are one run of the request, so one run of the cache.
    float* origin =
        parameters.data() + caches_[t].offset + request.shard_begin[static_cast<std::size_t>(shard)] * table.width;
    MPI_CHECK(MPI_Get(origin, static_cast<int>(wanted.size() * table.width), MPI_FLOAT, shard, 0, 1,
                      types.back().handle(), window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
}

void TableClient::fetch(std::span<float> features, std::size_t count, std::span<float> parameters) {
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    requests_[t] = request_for(t, features, count);
    get_rows(t, requests_[t], parameters);
    traffic_.rows_fetched += requests_[t].rows.size();
    traffic_.bytes += requests_[t].rows.size() * plan_.table(t).width * sizeof(float);
  }
  // Every table reads the sample's ids (run/table_layout.h), and a request depends only on the ids and the
  // number of shards: the tables' caches hold the same ids in the same places.
  const std::vector<std::uint32_t>& slot = requests_.front().slot;
  for (std::size_t k = 0; k < slot.size(); ++k) features[k] = static_cast<float>(slot[k]);
}

void TableClient::fetch_for_evaluation(std::span<float> features, std::size_t count, std::span<float> parameters) {
  RowRequest request;
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    request = request_for(t, features, count);
    get_rows(t, request, parameters);
  }
  for (std::size_t k = 0; k < request.slot.size(); ++k) features[k] = static_cast<float>(request.slot[k]);
}

void TableClient::push(std::span<const float> gradient) {
  const auto trainer = static_cast<std::size_t>(layout_.trainer_index);
  ++traffic_.pushes;
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    const TableSpec& table = plan_.table(t);
    const RowPlan& rows = plan_.rows(t);
    RowRequest& request = requests_[t];
    const auto shards = static_cast<std::size_t>(rows.shards());
    // Per shard: [rows touched, their local indices], alive until its epoch completes.
    std::vector<std::vector<std::int64_t>> headers(shards);
    for (std::size_t shard = 0; shard < shards; ++shard) {
      const auto touched =
          request.rows.empty() ? std::span<const std::uint64_t>() : request.rows_of(static_cast<int>(shard));
      PSTRAIN_ASSERT(touched.size() <= plan_.capacity(t, static_cast<int>(shard)), touched.size(),
                     " rows for a slot of ", plan_.capacity(t, static_cast<int>(shard)));
      headers[shard].push_back(static_cast<std::int64_t>(touched.size()));
      for (const std::uint64_t row : touched)
        headers[shard].push_back(static_cast<std::int64_t>(rows.local_index(row)));
    }
    // One epoch per window (two windows locked at once are not safe under osc/pt2pt): the servers read both only
    // after the step's first meeting. A shard's rows are one run of the cache, so their gradients are too.
    const MPI_Win grads_window = windows_[t].row_grads.handle();
    MPI_CHECK(MPI_Win_lock_all(0, grads_window));
    for (std::size_t shard = 0; shard < shards; ++shard) {
      const std::size_t touched = headers[shard].size() - 1;
      if (touched == 0) continue;
      const std::size_t capacity = plan_.capacity(t, static_cast<int>(shard));
      const float* origin = gradient.data() + caches_[t].offset + request.shard_begin[shard] * table.width;
      const auto length = static_cast<int>(touched * table.width);
      MPI_CHECK(MPI_Put(origin, length, MPI_FLOAT, static_cast<int>(shard),
                        static_cast<MPI_Aint>(trainer * capacity * table.width), length, MPI_FLOAT, grads_window));
    }
    MPI_CHECK(MPI_Win_unlock_all(grads_window));
    const MPI_Win ids_window = windows_[t].row_ids.handle();
    MPI_CHECK(MPI_Win_lock_all(0, ids_window));
    for (std::size_t shard = 0; shard < shards; ++shard) {
      const std::size_t capacity = plan_.capacity(t, static_cast<int>(shard));
      const auto length = static_cast<int>(headers[shard].size());
      MPI_CHECK(MPI_Put(headers[shard].data(), length, MPI_INT64_T, static_cast<int>(shard),
                        static_cast<MPI_Aint>(trainer * (1 + capacity)), length, MPI_INT64_T, ids_window));
    }
    MPI_CHECK(MPI_Win_unlock_all(ids_window));
    traffic_.rows_pushed += request.rows.size();
    traffic_.bytes += request.rows.size() * (table.width * sizeof(float) + sizeof(std::int64_t));
    request = RowRequest{};
  }
}

void TableClient::read_rows(std::size_t t, std::uint64_t first, std::uint64_t count, std::span<float> out) {
  const TableSpec& table = plan_.table(t);
  const RowPlan& rows = plan_.rows(t);
  PSTRAIN_ASSERT(first + count <= rows.rows() && out.size() >= count * table.width, "rows ", first, "+", count);
  const auto shards = static_cast<std::uint64_t>(rows.shards());
  std::vector<comm::Datatype> types;
  const MPI_Win window = windows_[t].rows.handle();
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < rows.shards(); ++shard) {
    // The shard's rows in [first, first + count): r0, r0 + P, ..., consecutive local rows on the shard.
    const std::uint64_t r0 = first + (static_cast<std::uint64_t>(shard) + shards - first % shards) % shards;
    if (r0 >= first + count) continue;
    const std::uint64_t n = (first + count - r0 + shards - 1) / shards;
    types.push_back(comm::Datatype::strided_floats(as_displacement(n, table.name), static_cast<int>(table.width),
                                                   as_displacement(table.width * shards, table.name)));
    MPI_CHECK(MPI_Get(out.data() + (r0 - first) * table.width, 1, types.back().handle(), shard,
                      static_cast<MPI_Aint>(rows.local_index(r0) * table.width),
                      as_displacement(n * table.width, table.name), MPI_FLOAT, window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
}

bool fetch_rows_for_batch(TableClient* tables, std::span<float> features, std::size_t count,
                          std::span<float> parameters, double& seconds) {
  if (tables == nullptr) return false;
  const comm::Watchdog::Wait wait("fetching table rows from the servers");
  const auto start = Clock::now();
  tables->fetch(features, count, parameters);
  seconds += seconds_since(start);
  return true;
}

bool fetch_rows_for_evaluation(TableClient* tables, std::span<float> features, std::size_t count,
                               std::span<float> parameters) {
  if (tables == nullptr) return false;
  const comm::Watchdog::Wait wait("fetching table rows from the servers for evaluation");
  tables->fetch_for_evaluation(features, count, parameters);
  return true;
}

bool read_table_rows(TableClient* tables, std::size_t table, std::uint64_t first, std::uint64_t count,
                     std::span<float> out) {
  if (tables == nullptr) return false;
  const comm::Watchdog::Wait wait("reading a table's rows from the servers for the pass folder");
  tables->read_rows(table, first, count, out);
  return true;
}

}  // namespace pstrain::ps
