#include "ps/table_client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "comm/datatype.h"
#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/timing.h"
#include "nn/id_hash.h"

namespace pstrain::ps {

namespace {

int as_displacement(std::uint64_t value, const std::string& table) {
  PSTRAIN_ASSERT(value <= static_cast<std::uint64_t>(std::numeric_limits<int>::max()), "table ", table,
                 " too large for int displacements: ", value);
  return static_cast<int>(value);
}

}  // namespace

TableClient::TableClient(TableWindows& windows, const TablePlan& plan, std::vector<RowCache> caches,
                         const comm::WorldLayout& layout)
    : windows_(windows),
      plan_(plan),
      caches_(std::move(caches)),
      layout_(layout),
      shards_(plan.empty() ? 0 : plan.rows(0).shards()),
      requests_(plan.size()) {
  PSTRAIN_ASSERT(!windows.empty() || plan.empty(), "no table windows for ", plan.size(), " tables");
  PSTRAIN_ASSERT(caches_.size() == plan.size(), caches_.size(), " row caches for ", plan.size(), " tables");
}

RowRequest TableClient::request_for(std::size_t t, const BatchLookups& batch, const std::vector<ResolvedKeys>& keys) {
  const TableSpec& table = plan_.table(t);
  if (table.reads_bags()) return request_for_bags(t, batch, keys);
  const std::span<float> features = batch.features;
  const std::size_t count = batch.count;
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

// Walks the bags as embedding_bag does (field by field, sample by sample, id by id), so that the request's slot k
// is the cache row of the layer's k-th lookup.
RowRequest TableClient::request_for_bags(std::size_t t, const BatchLookups& batch,
                                         const std::vector<ResolvedKeys>& keys) {
  const TableSpec& table = plan_.table(t);
  PSTRAIN_ASSERT(batch.categorical != nullptr && batch.categorical->samples == batch.count, "table ", table.name,
                 " looks up bags of categorical ids, and the batch of ", batch.count, " samples carries ",
                 batch.categorical == nullptr ? 0 : batch.categorical->samples);
  const core::JaggedIds& bags = *batch.categorical;
  ids_.clear();
  default_lookups_ = 0;
  for (const std::size_t field : table.fields) {
    for (std::size_t sample = 0; sample < batch.count; ++sample) {
      for (const std::uint64_t id : bags.bag(field, sample)) {
        if (!table.exact_keys()) {
          ids_.push_back(static_cast<std::int64_t>(nn::hashed_row(id, table.hash_seed, table.rows)));
          continue;
        }
        const std::uint64_t row = keys[t].row_of(static_cast<std::int64_t>(id));
        if (row < static_cast<std::uint64_t>(shards_)) ++default_lookups_;  // local row 0 of its owner
        ids_.push_back(static_cast<std::int64_t>(row));
      }
    }
  }
  RowRequest request = make_row_request(ids_, plan_.rows(t));
  PSTRAIN_ASSERT(request.rows.size() <= caches_[t].rows, request.rows.size(), " rows of table ", table.name,
                 " for a cache of ", caches_[t].rows, " (a bag longer than the data's longest?)");
  return request;
}

void TableClient::add_cache_blocks(std::size_t t, const RowRequest& request, std::span<const std::uint32_t> places,
                                   int shard, std::vector<int>& lengths, std::vector<int>& at) const {
  const std::size_t width = plan_.table(t).width;
  const auto s = static_cast<std::size_t>(shard);
  const std::size_t begin = request.shard_begin[s], end = request.shard_begin[s + 1];
  if (places.empty()) {
    lengths.push_back(static_cast<int>((end - begin) * width));
    at.push_back(cache_run_at(t, request, shard));
    return;
  }
  for (std::size_t k = begin; k < end; ++k) {
    lengths.push_back(static_cast<int>(width));
    at.push_back(static_cast<int>(caches_[t].offset + places[k] * width));
  }
}

// One MPI_Get per shard for every table's rows: the origin a block per table (the shard's rows are one run of the
// table's cache) or per held row, the target a block per row in the shard's part of the rows window
// (table_windows.h).
void TableClient::get_rows(const std::vector<RowRequest>& requests,
                           const std::vector<std::vector<std::uint32_t>>& places, std::span<float> parameters) {
  PSTRAIN_ASSERT(parameters.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "a flat parameter vector of ", parameters.size(), " floats: too large for int displacements");
  std::vector<comm::Datatype> types;  // alive until the epoch completes
  const MPI_Win window = windows_.rows();
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < shards_; ++shard) {
    std::vector<int> origin_lengths, origin_at, target_lengths;
    std::vector<MPI_Aint> target_bytes;
    for (std::size_t t = 0; t < plan_.size(); ++t) {
      const auto wanted = requests[t].rows_of(shard);
      if (wanted.empty()) continue;
      const TableSpec& table = plan_.table(t);
      const RowPlan& rows = plan_.rows(t);
      add_cache_blocks(t, requests[t], places[t], shard, origin_lengths, origin_at);
      for (const std::uint64_t row : wanted) {
        target_lengths.push_back(static_cast<int>(table.width));
        target_bytes.push_back(
            static_cast<MPI_Aint>((windows_.rows_at(t, shard) + rows.local_index(row) * table.width) * sizeof(float)));
      }
    }
    if (origin_lengths.empty()) continue;
    types.push_back(comm::Datatype::indexed_floats(origin_lengths, origin_at));
    types.push_back(comm::Datatype::hindexed(target_lengths, target_bytes, MPI_FLOAT));
    MPI_CHECK(
        MPI_Get(parameters.data(), 1, types[types.size() - 2].handle(), shard, 0, 1, types.back().handle(), window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
}

void TableClient::hold_rows_until_push(std::span<float> first_values) {
  holding_ = true;
  first_values_ = first_values;
  held_.assign(plan_.size(), {});
  held_rows_.assign(plan_.size(), {});
}

void TableClient::fetch(const BatchLookups& batch, std::span<float> parameters) {
  if (holding_) {
    fetch_held(batch, parameters);
    return;
  }
  const auto start = Clock::now();
  resolve_batch_keys(batch, keys_);
  if (plan_.any_exact_keys()) traffic_.resolve_seconds += seconds_since(start);
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    requests_[t] = request_for(t, batch, keys_);
    if (plan_.table(t).exact_keys()) {
      traffic_.keyed_lookups += requests_[t].slot.size();
      traffic_.default_lookups += default_lookups_;
    }
    traffic_.rows_fetched += requests_[t].rows.size();
    traffic_.bytes += requests_[t].rows.size() * plan_.table(t).width * sizeof(float);
  }
  get_rows(requests_, std::vector<std::vector<std::uint32_t>>(plan_.size()), parameters);
  place_lookups(requests_, batch.features);
}

// The batch's distinct rows of each table: those held already keep their cache rows, the others take the next
// free ones and are fetched (ordered by shard, as make_row_request orders them) and copied to first_values_; each
// lookup then reads its row's cache row.
void TableClient::fetch_held(const BatchLookups& batch, std::span<float> parameters) {
  std::vector<RowRequest> fetches(plan_.size());
  std::vector<std::vector<std::uint32_t>> places(plan_.size());
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    RowRequest lookups = request_for(t, batch, keys_);  // no keyed table here: geo refuses them
    RowRequest& fetch = fetches[t];
    fetch.shard_begin.assign(static_cast<std::size_t>(shards_) + 1, 0);
    std::vector<std::uint32_t> cache_row(lookups.rows.size());
    for (std::size_t k = 0; k < lookups.rows.size(); ++k) {
      const std::uint64_t row = lookups.rows[k];
      const auto [held, added] = held_[t].try_emplace(row, static_cast<std::uint32_t>(held_rows_[t].size()));
      if (added) {
        PSTRAIN_ASSERT(held_rows_[t].size() < caches_[t].rows, "table ", plan_.table(t).name,
                       ": more rows held than its cache of ", caches_[t].rows);
        held_rows_[t].push_back(row);
        fetch.rows.push_back(row);
        places[t].push_back(held->second);
        ++fetch.shard_begin[static_cast<std::size_t>(plan_.rows(t).owner(row)) + 1];
      }
      cache_row[k] = held->second;
    }
    std::partial_sum(fetch.shard_begin.begin(), fetch.shard_begin.end(), fetch.shard_begin.begin());
    for (std::uint32_t& slot : lookups.slot) slot = cache_row[slot];
    requests_[t] = std::move(lookups);
    traffic_.rows_fetched += fetch.rows.size();
    traffic_.bytes += fetch.rows.size() * plan_.table(t).width * sizeof(float);
  }
  get_rows(fetches, places, parameters);
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    const std::size_t width = plan_.table(t).width;
    for (const std::uint32_t place : places[t]) {
      const std::size_t at = caches_[t].offset + place * width;
      std::copy_n(parameters.begin() + static_cast<std::ptrdiff_t>(at), width,
                  first_values_.begin() + static_cast<std::ptrdiff_t>(at));
    }
  }
  place_lookups(requests_, batch.features);
}

void TableClient::request_held_rows(std::vector<std::vector<std::uint32_t>>& places) {
  places.assign(plan_.size(), {});
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    const std::vector<std::uint64_t>& held = held_rows_[t];
    ids_.assign(held.begin(), held.end());
    requests_[t] = make_row_request(ids_, plan_.rows(t));
    places[t].resize(held.size());
    for (std::size_t place = 0; place < held.size(); ++place)
      places[t][requests_[t].slot[place]] = static_cast<std::uint32_t>(place);
    held_[t].clear();
    held_rows_[t].clear();
  }
}

void TableClient::fetch_for_evaluation(const BatchLookups& batch, std::span<float> parameters) {
  for (std::size_t t = 0; holding_ && t < plan_.size(); ++t) {
    PSTRAIN_ASSERT(held_rows_[t].empty(), "an evaluation between meetings would overwrite the ", held_rows_[t].size(),
                   " rows held of table ", plan_.table(t).name);
  }
  std::vector<ResolvedKeys> keys;
  resolve_batch_keys(batch, keys);
  std::vector<RowRequest> requests(plan_.size());
  for (std::size_t t = 0; t < plan_.size(); ++t) requests[t] = request_for(t, batch, keys);
  get_rows(requests, std::vector<std::vector<std::uint32_t>>(plan_.size()), parameters);
  place_lookups(requests, batch.features);
}

void TableClient::place_lookups(const std::vector<RowRequest>& requests, std::span<float> features) {
  cached_lookups_.assign(plan_.size(), {});
  const RowRequest* single_ids = nullptr;
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    if (plan_.table(t).reads_bags()) {
      cached_lookups_[t] = requests[t].slot;
    } else {
      single_ids = &requests[t];
    }
  }
  if (single_ids == nullptr) return;
  // Every table of single ids reads the sample's ids (ps/model_tables.h), and a request depends only on the ids
  // and the number of shards: those tables' caches hold the same ids in the same places.
  const std::vector<std::uint32_t>& slot = single_ids->slot;
  for (std::size_t k = 0; k < slot.size(); ++k) features[k] = static_cast<float>(slot[k]);
}

// Per shard, one put of every table's row gradients into this trainer's slots (the origin a block per table: the
// shard's rows are one run of the cache), then one put of every table's header [rows touched, their local
// indices] (a table that touched nothing there says 0, so the server never reads a slot of an earlier step).
// One epoch per window (two windows locked at once are not safe under osc/pt2pt): the servers read both only
// after the step's first meeting.
void TableClient::push(std::span<const float> gradient) {
  const int trainer = layout_.trainer_index;
  ++traffic_.pushes;
  std::vector<std::vector<std::uint32_t>> places(plan_.size());  // empty: a batch's rows, in request order
  if (holding_) request_held_rows(places);
  std::vector<std::vector<std::int64_t>> headers(static_cast<std::size_t>(shards_));  // alive until the epoch ends
  std::vector<std::vector<int>> header_lengths(static_cast<std::size_t>(shards_));
  std::vector<comm::Datatype> types;
  const MPI_Win grads_window = windows_.row_grads();
  MPI_CHECK(MPI_Win_lock_all(0, grads_window));
  for (int shard = 0; shard < shards_; ++shard) {
    std::vector<int> origin_lengths, origin_at, target_lengths;
    std::vector<MPI_Aint> target_bytes;
    for (std::size_t t = 0; t < plan_.size(); ++t) {
      const TableSpec& table = plan_.table(t);
      const RowRequest& request = requests_[t];
      const auto touched = request.rows.empty() ? std::span<const std::uint64_t>() : request.rows_of(shard);
      PSTRAIN_ASSERT(touched.size() <= plan_.capacity(t, shard), touched.size(), " rows of table ", table.name,
                     " for a slot of ", plan_.capacity(t, shard));
      std::vector<std::int64_t>& header = headers[static_cast<std::size_t>(shard)];
      const std::size_t header_begin = header.size();
      header.push_back(static_cast<std::int64_t>(touched.size()));
      for (const std::uint64_t row : touched)
        header.push_back(static_cast<std::int64_t>(plan_.rows(t).local_index(row)));
      if (table.exact_keys()) add_keyed_words(t, shard, touched, header);
      header_lengths[static_cast<std::size_t>(shard)].push_back(static_cast<int>(header.size() - header_begin));
      if (touched.empty()) continue;
      add_cache_blocks(t, request, places[t], shard, origin_lengths, origin_at);
      target_lengths.push_back(static_cast<int>(touched.size() * table.width));
      target_bytes.push_back(static_cast<MPI_Aint>(windows_.slot_grads_at(t, trainer, shard) * sizeof(float)));
    }
    if (origin_lengths.empty()) continue;
    types.push_back(comm::Datatype::indexed_floats(origin_lengths, origin_at));
    types.push_back(comm::Datatype::hindexed(target_lengths, target_bytes, MPI_FLOAT));
    MPI_CHECK(MPI_Put(gradient.data(), 1, types[types.size() - 2].handle(), shard, 0, 1, types.back().handle(),
                      grads_window));
  }
  MPI_CHECK(MPI_Win_unlock_all(grads_window));
  const MPI_Win ids_window = windows_.row_ids();
  MPI_CHECK(MPI_Win_lock_all(0, ids_window));
  for (int shard = 0; shard < shards_; ++shard) {
    // The headers lie one after the other here, each at its table's slot there.
    const std::vector<std::int64_t>& header = headers[static_cast<std::size_t>(shard)];
    const std::vector<int>& lengths = header_lengths[static_cast<std::size_t>(shard)];
    std::vector<MPI_Aint> target_bytes;
    for (std::size_t t = 0; t < plan_.size(); ++t) {
      target_bytes.push_back(static_cast<MPI_Aint>(windows_.slot_ids_at(t, trainer, shard) * sizeof(std::int64_t)));
    }
    types.push_back(comm::Datatype::hindexed(lengths, target_bytes, MPI_INT64_T));
    MPI_CHECK(MPI_Put(header.data(), static_cast<int>(header.size()), MPI_INT64_T, shard, 0, 1, types.back().handle(),
                      ids_window));
  }
  MPI_CHECK(MPI_Win_unlock_all(ids_window));
  for (std::size_t t = 0; t < plan_.size(); ++t) {
    traffic_.rows_pushed += requests_[t].rows.size();
    traffic_.bytes += requests_[t].rows.size() * (plan_.table(t).width * sizeof(float) + sizeof(std::int64_t));
    requests_[t] = RowRequest{};
  }
  keys_.assign(plan_.size(), {});
  id_of_row_.clear();
}

void TableClient::read_rows(std::size_t t, std::uint64_t first, std::uint64_t count, std::span<float> out) {
  const TableSpec& table = plan_.table(t);
  if (table.exact_keys()) {
    read_keyed_rows(t, first, count, out);
    return;
  }
  const RowPlan& rows = plan_.rows(t);
  PSTRAIN_ASSERT(first + count <= rows.rows() && out.size() >= count * table.width, "rows ", first, "+", count);
  const auto shards = static_cast<std::uint64_t>(rows.shards());
  std::vector<comm::Datatype> types;
  const MPI_Win window = windows_.rows();
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < rows.shards(); ++shard) {
    // The shard's rows in [first, first + count): r0, r0 + P, ..., consecutive local rows on the shard.
    const std::uint64_t r0 = first + (static_cast<std::uint64_t>(shard) + shards - first % shards) % shards;
    if (r0 >= first + count) continue;
    const std::uint64_t n = (first + count - r0 + shards - 1) / shards;
    types.push_back(comm::Datatype::strided_floats(as_displacement(n, table.name), static_cast<int>(table.width),
                                                   as_displacement(table.width * shards, table.name)));
    MPI_CHECK(MPI_Get(out.data() + (r0 - first) * table.width, 1, types.back().handle(), shard,
                      static_cast<MPI_Aint>(windows_.rows_at(t, shard) + rows.local_index(r0) * table.width),
                      as_displacement(n * table.width, table.name), MPI_FLOAT, window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
}

bool fetch_rows_for_batch(TableClient* tables, const BatchLookups& batch, std::span<float> parameters,
                          double& seconds) {
  if (tables == nullptr) return false;
  const comm::Watchdog::Wait wait("fetching table rows from the servers");
  const auto start = Clock::now();
  tables->fetch(batch, parameters);
  seconds += seconds_since(start);
  return true;
}

bool fetch_rows_for_evaluation(TableClient* tables, const BatchLookups& batch, std::span<float> parameters) {
  if (tables == nullptr) return false;
  const comm::Watchdog::Wait wait("fetching table rows from the servers for evaluation");
  tables->fetch_for_evaluation(batch, parameters);
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
