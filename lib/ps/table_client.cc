#include "ps/table_client.h"

#include <chrono>
#include <cmath>
#include <limits>

#include "comm/datatype.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"

namespace pstrain::ps {

namespace {

int as_displacement(std::uint64_t value, const std::string& table) {
  PSTRAIN_ASSERT(value <= static_cast<std::uint64_t>(std::numeric_limits<int>::max()), "table ", table,
                 " too large for int displacements: ", value);
  return static_cast<int>(value);
}

}  // namespace

TableClient::TableClient(std::vector<TableWindows>& windows, const TablePlan& plan, const comm::WorldLayout& layout)
    : windows_(windows), plan_(plan), layout_(layout), requests_(plan.size()) {
  PSTRAIN_ASSERT(windows.size() == plan.size(), windows.size(), " table windows for ", plan.size(), " tables");
}

void TableClient::fetch(std::span<const float> features, std::size_t count, std::span<float> parameters) {
  for (std::size_t t = 0; t < plan_.size(); ++t) {
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
    requests_[t] = make_row_request(ids_, plan_.rows(t));
    const RowPlan& rows = plan_.rows(t);
    const int width = static_cast<int>(table.width);
    std::vector<comm::Datatype> types;  // alive until the epoch completes
    const MPI_Win window = windows_[t].rows.handle();
    MPI_CHECK(MPI_Win_lock_all(0, window));
    for (int shard = 0; shard < plan_.rows(t).shards(); ++shard) {
      const auto wanted = requests_[t].rows_of(shard);
      if (wanted.empty()) continue;
      std::vector<int> at_origin;
      std::vector<int> at_target;
      for (const std::uint64_t row : wanted) {
        at_origin.push_back(as_displacement(table.offset + row * table.width, table.name));
        at_target.push_back(as_displacement(rows.local_index(row) * table.width, table.name));
      }
      types.push_back(comm::Datatype::indexed_block_floats(width, at_origin));
      types.push_back(comm::Datatype::indexed_block_floats(width, at_target));
      MPI_CHECK(
          MPI_Get(parameters.data(), 1, types[types.size() - 2].handle(), shard, 0, 1, types.back().handle(), window));
    }
    MPI_CHECK(MPI_Win_unlock_all(window));
    traffic_.rows_fetched += requests_[t].rows.size();
    traffic_.bytes += requests_[t].rows.size() * table.width * sizeof(float);
  }
}

void TableClient::push(std::span<const float> gradient) {
  const auto trainer = static_cast<std::size_t>(layout_.trainer_index);
  ++traffic_.pushes;
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    const TableSpec& table = plan_.table(t);
    const RowPlan& rows = plan_.rows(t);
    RowRequest& request = requests_[t];
    const auto shards = static_cast<std::size_t>(rows.shards());
    // Per shard: [rows touched, their local indices] and the datatype picking their gradients out of the flat
    // vector. Both stay alive until their epochs complete.
    std::vector<std::vector<std::int64_t>> headers(shards);
    std::vector<comm::Datatype> picks(shards);
    for (std::size_t shard = 0; shard < shards; ++shard) {
      const auto touched =
          request.rows.empty() ? std::span<const std::uint64_t>() : request.rows_of(static_cast<int>(shard));
      PSTRAIN_ASSERT(touched.size() <= plan_.capacity(t, static_cast<int>(shard)), touched.size(),
                     " rows for a slot of ", plan_.capacity(t, static_cast<int>(shard)));
      headers[shard].push_back(static_cast<std::int64_t>(touched.size()));
      std::vector<int> at_origin;
      for (const std::uint64_t row : touched) {
        headers[shard].push_back(static_cast<std::int64_t>(rows.local_index(row)));
        at_origin.push_back(as_displacement(table.offset + row * table.width, table.name));
      }
      if (!touched.empty())
        picks[shard] = comm::Datatype::indexed_block_floats(static_cast<int>(table.width), at_origin);
    }
    // One epoch per window (two windows locked at once are not safe under osc/pt2pt): the servers read both only
    // after the step's first meeting.
    const MPI_Win grads_window = windows_[t].row_grads.handle();
    MPI_CHECK(MPI_Win_lock_all(0, grads_window));
    for (std::size_t shard = 0; shard < shards; ++shard) {
      const std::size_t touched = headers[shard].size() - 1;
      if (touched == 0) continue;
      const std::size_t capacity = plan_.capacity(t, static_cast<int>(shard));
      MPI_CHECK(MPI_Put(gradient.data(), 1, picks[shard].handle(), static_cast<int>(shard),
                        static_cast<MPI_Aint>(trainer * capacity * table.width),
                        static_cast<int>(touched * table.width), MPI_FLOAT, grads_window));
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

void TableClient::fetch_all(std::span<float> parameters) {
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    const TableSpec& table = plan_.table(t);
    const RowPlan& rows = plan_.rows(t);
    std::vector<comm::Datatype> types;
    const MPI_Win window = windows_[t].rows.handle();
    MPI_CHECK(MPI_Win_lock_all(0, window));
    for (int shard = 0; shard < rows.shards(); ++shard) {
      const std::uint64_t count = rows.rows_on(shard);
      if (count == 0) continue;
      const int width = static_cast<int>(table.width);
      types.push_back(comm::Datatype::strided_floats(as_displacement(count, table.name), width,
                                                     as_displacement(table.width * rows.shards(), table.name)));
      const std::size_t first = table.offset + static_cast<std::size_t>(shard) * table.width;
      MPI_CHECK(MPI_Get(parameters.data() + first, 1, types.back().handle(), shard, 0,
                        as_displacement(count * table.width, table.name), MPI_FLOAT, window));
    }
    MPI_CHECK(MPI_Win_unlock_all(window));
  }
}

bool fetch_rows_for_batch(TableClient* tables, std::span<const float> features, std::size_t count,
                          std::span<float> parameters, double& seconds) {
  if (tables == nullptr) return false;
  const comm::Watchdog::Wait wait("fetching table rows from the servers");
  const auto start = std::chrono::steady_clock::now();
  tables->fetch(features, count, parameters);
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

}  // namespace pstrain::ps
