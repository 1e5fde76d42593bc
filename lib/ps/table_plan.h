#pragma once
// Row tables on the parameter servers: an embedding table whose step touches a few of its rows is held by the
// server shards row by row (row r on shard r mod P, row_plan.h), not cut into the dense blocks of shard_plan.h.
// A trainer fetches the rows its batch looks up before the forward pass and sends back only their gradients;
// memory per server is the table over P, traffic per step grows with the distinct ids of a batch.
//
// The plan is computed identically on every rank from the model's layout and the batch size. What a shard holds
// of the whole model (its dense blocks, and its rows of each table) is a ModelPartition. A checkpoint gathers the
// dense blocks into full tensors and takes each shard's rows as a file of its own (checkpoint/table_rows.h);
// either is cut again for any number of servers.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ps/row_plan.h"
#include "ps/shard_plan.h"

namespace pstrain::ps {

// A table keyed by the raw id (--table-keys exact, keyed_rows.h) instead of hashed into its rows: each server holds
// up to `rows_per_shard` - 1 rows of ids it owns (key_owner), in local rows 1.., and at local row 0 the default row
// (zeros, never updated) that every id without a row reads. Global row l * P + s as for any table (row_plan.h), so
// fetches and pushes go as for hashed tables; what differs is how a trainer finds an id's row (exchange/
// step_protocol.h) and that a push also carries the ids it looked up (their sightings, for admission and recency).
struct KeyedSpec {
  std::uint64_t rows_per_shard = 0;  // 0: hashed, not keyed
  float first_limit = 0;             // an admitted row starts U(-limit, limit) (first_values of keyed_rows.h)
  std::uint32_t admit_after = 1;
  double admit_probability = 1.0;
  std::int64_t ttl_steps = 0;
  std::uint64_t seed = 0;
  std::uint32_t probe_bound = 8;  // an id lies within this many buckets of its home (key_index.h)
};

struct TableSpec {
  std::string name;                // the parameter's name ("embed.weight")
  std::size_t offset = 0;          // into the flat parameter vector
  std::uint64_t rows = 0;          // the vocabulary
  std::size_t width = 0;           // floats per row
  std::size_t ids_per_sample = 0;  // lookups per sample at most: the sample's features are the ids, or its bags'
  // A table of bags (embedding_bag): the categorical fields it reads (in the layer's order), whose raw ids hash into
  // its rows with this seed (nn/id_hash.h). Empty: the sample's features are the table's ids.
  std::vector<std::size_t> fields = {};
  std::uint64_t hash_seed = 0;
  KeyedSpec keys = {};

  bool reads_bags() const { return !fields.empty(); }
  bool exact_keys() const { return keys.rows_per_shard > 0; }
  // Rows the servers hold together: the vocabulary, or of a keyed table every shard's cap and default row.
  std::uint64_t server_rows(int shards) const {
    return exact_keys() ? keys.rows_per_shard * static_cast<std::uint64_t>(shards) : rows;
  }
};

class TablePlan {
 public:
  TablePlan() = default;  // no row tables
  // `batch_size`: samples in one trainer step, which bounds the rows a step can touch.
  TablePlan(std::vector<TableSpec> tables, int shards, std::size_t batch_size);

  bool empty() const { return tables_.empty(); }
  std::size_t size() const { return tables_.size(); }
  const TableSpec& table(std::size_t index) const { return tables_.at(index); }
  const RowPlan& rows(std::size_t index) const { return row_plans_.at(index); }
  // Distinct rows one trainer's step can touch on `shard`: its slot size on that shard.
  std::size_t capacity(std::size_t index, int shard) const;
  // Of a keyed table: distinct ids one trainer's step can look up on any shard (its slot of sightings).
  std::size_t key_capacity(std::size_t index) const { return batch_size_ * table(index).ids_per_sample; }
  bool any_exact_keys() const;
  // Floats of the tables that lie before `offset` in the flat vector: where the model's flat layout and its
  // dense layout (the tables taken out, the rest packed in order) differ.
  std::size_t floats_before(std::size_t offset) const;

 private:
  std::vector<TableSpec> tables_;
  std::vector<RowPlan> row_plans_;
  std::size_t batch_size_ = 0;
};

// What each server shard holds of the model: its dense blocks (its slice of the dense parameters and of every
// optimizer vector, in the shard's local order) and its rows of every row table (in the tables' windows).
class ModelPartition {
 public:
  ModelPartition(const ShardPlan& blocks, const TablePlan& tables) : blocks_(blocks), tables_(tables) {}

  int shards() const { return blocks_.shards(); }
  const ShardPlan& blocks() const { return blocks_; }
  const TablePlan& tables() const { return tables_; }
  // Shard `shard`'s dense blocks between their part of its slice (the first blocks().shard_size(shard) floats)
  // and a vector in the dense layout (the model's parameters less the row tables, packed: what a checkpoint's
  // model.h5 holds; the rows go to row files of their own).
  void gather_dense(int shard, std::span<const float> dense, std::span<float> slice) const;
  void scatter_dense(int shard, std::span<const float> slice, std::span<float> dense) const;
  std::size_t dense_size() const { return blocks_.total_size() - tables_.floats_before(blocks_.total_size()); }

 private:
  const ShardPlan& blocks_;
  const TablePlan& tables_;
};

}  // namespace pstrain::ps
