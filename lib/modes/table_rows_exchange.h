#pragma once
// What every parameter-server exchange (sync either way, async, ssp) does with the row tables the servers hold by
// rows: fetch a batch's rows before it, evaluation's rows, and a pass folder's rows (ps/table_client.h). Null
// `tables`: the model has none, and the exchange has no row tables (GradientExchange::row_tables is null).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "exchange/gradient_exchange.h"
#include "ps/table_client.h"

namespace pstrain::modes {

class TableRowsExchange : public exchange::GradientExchange, public exchange::RowTableAccess {
 public:
  explicit TableRowsExchange(ps::TableClient* tables) : tables_(tables) {}

  exchange::RowTableAccess* row_tables() override { return tables_ != nullptr ? this : nullptr; }

  bool fetch_for_batch(std::span<float> features, const core::JaggedIds* categorical, std::size_t count,
                       std::span<float> parameters) override {
    if (tables_ == nullptr) return false;
    const ps::TableTraffic before = tables_->traffic();
    ps::fetch_rows_for_batch(tables_, {features, categorical, count}, parameters, timers_.pull_seconds);
    keyed_lookups_.lookups += static_cast<double>(tables_->traffic().keyed_lookups - before.keyed_lookups);
    keyed_lookups_.on_default_row += static_cast<double>(tables_->traffic().default_lookups - before.default_lookups);
    keyed_lookups_.resolve_seconds += tables_->traffic().resolve_seconds - before.resolve_seconds;
    return true;
  }
  bool fetch_for_evaluation(std::span<float> features, const core::JaggedIds* categorical, std::size_t count,
                            std::span<float> parameters) override {
    return ps::fetch_rows_for_evaluation(tables_, {features, categorical, count}, parameters);
  }
  const nn::CachedLookups& cached_lookups() const override { return tables_->cached_lookups(); }
  void read_table_rows(std::size_t table, std::uint64_t first, std::uint64_t count, std::span<float> out) override {
    ps::read_table_rows(tables_, table, first, count, out);
  }
  std::vector<std::int64_t> held_ids(std::size_t table) override { return ps::read_held_ids(tables_, table); }
  exchange::KeyedRowCounts keyed_row_counts() override { return ps::read_keyed_row_counts(tables_); }

 protected:
  ps::TableClient* tables_;
};

}  // namespace pstrain::modes
