#pragma once
// The memory of every row table (table_plan.h) on the servers: three windows in all, whatever the number of
// tables, so that a trainer's step opens three one-sided epochs (one get, two puts) and makes one MPI call per
// server and epoch however many tables its model has (a CTR model has tens, one per field).
//
// On server shard s (trainers expose nothing), for tables t = 0..N-1 in TablePlan order:
//   rows      float  [sum_t R_ts x W_t]              table after table: the shard's rows of table t, local row l
//                                                    = global row l * P + s
//   row_ids   int64  T x [sum_t (1 + C_ts)]          per trainer, table after table: how many rows its last step
//                                                    touched here, then their local indices, increasing
//   row_grads float  T x [sum_t C_ts x W_t]          per trainer, table after table: those rows' gradients, in the
//                                                    same order
// and, when some table is keyed by the raw id (TableSpec::exact_keys), a fourth, for trainers to read one-sidedly:
//   key_index int64  [sum_t keyed: 5 + 2 x B_t]     table after table: its counters (rows held, admitted, evicted,
//                                                    refused, gradients dropped; written at every meeting) and its
//                                                    index of B_t KeyBuckets (key_index.h), two words each
// A keyed table's row_ids slot goes on after its rows' indices: the ids those rows were read for (n of them), then
// [m, m distinct ids it looked up here], its sightings (at most K_t = TablePlan::key_capacity).
// (R_ts: rows of table t on shard s, W_t: its row width, C_ts: the rows one step can touch there,
// TablePlan::capacity; T: trainers, a slot each, with node aggregation too.) Every rank computes every shard's
// offsets from the plan. Who waits for whom over these words: exchange/step_protocol.h. Every access to a
// window's memory, local or remote, happens inside a lock epoch on that window.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "comm/layout.h"
#include "comm/window.h"
#include "ps/key_index.h"
#include "ps/table_plan.h"

namespace pstrain::ps {

// The key_index window's words per keyed table before its buckets, and per bucket.
inline constexpr std::size_t kKeyCounterWords = 5;
inline constexpr std::size_t kWordsPerBucket = sizeof(KeyBucket) / sizeof(std::int64_t);
enum KeyCounter : std::size_t {
  kRowsHeld = 0,
  kRowsAdmitted = 1,
  kRowsEvicted = 2,
  kIdsRefused = 3,
  kGradientsDropped = 4,  // async: rows that changed hands between a trainer's read and its push
};

class TableWindows {
 public:
  // Collective over `world`; creates no window when `plan` has no table (every rank plans the same tables). A
  // server's row slots start empty (zero rows touched), its rows zero.
  TableWindows(MPI_Comm world, const comm::WorldLayout& layout, const TablePlan& plan);

  bool empty() const { return tables_ == 0; }
  MPI_Win rows() const { return rows_.handle(); }
  MPI_Win row_ids() const { return row_ids_.handle(); }
  MPI_Win row_grads() const { return row_grads_.handle(); }
  MPI_Win key_index() const { return key_index_.handle(); }

  // Where table t's parts lie on shard `shard`: in floats of rows, int64 of row_ids and floats of row_grads
  // (the window's displacement unit is its element).
  std::size_t rows_at(std::size_t t, int shard) const { return at(rows_offset_, t, shard); }
  std::size_t slot_ids_at(std::size_t t, int trainer, int shard) const;
  std::size_t slot_grads_at(std::size_t t, int trainer, int shard) const;
  // A keyed table's counters on `shard` (int64 words of key_index), its buckets right after.
  std::size_t key_index_at(std::size_t t, int shard) const { return at(keys_offset_, t, shard); }

  // This server's own parts of table t; touch them only inside an epoch on their window.
  std::span<float> local_rows(std::size_t t) const;
  std::span<const std::int64_t> local_slot_ids(std::size_t t, int trainer) const;
  std::span<const float> local_slot_grads(std::size_t t, int trainer) const;
  std::span<std::int64_t> local_key_counters(std::size_t t) const;
  std::span<KeyBucket> local_key_index(std::size_t t) const;

 private:
  std::size_t at(const std::vector<std::size_t>& offsets, std::size_t t, int shard) const {
    return offsets[static_cast<std::size_t>(shard) * (tables_ + 1) + t];
  }
  // Per shard, tables_ + 1 offsets (the last: the total, per trainer for the slots).
  static std::vector<std::size_t> offsets(const TablePlan& plan,
                                          std::size_t (*size)(const TablePlan&, std::size_t, int));

  std::size_t tables_ = 0;
  int shard_ = -1;  // this rank's shard, -1 on a trainer
  std::vector<std::size_t> rows_offset_, ids_offset_, grads_offset_, keys_offset_;
  comm::Window<float> rows_;
  comm::Window<std::int64_t> row_ids_;
  comm::Window<float> row_grads_;
  comm::Window<std::int64_t> key_index_;
};

}  // namespace pstrain::ps
