#pragma once
// What every parameter-server exchange (sync either way, async, ssp) does with the row tables the servers hold by
// rows: fetch a batch's rows before it, evaluation's rows, and a pass folder's rows (ps/table_client.h). Null
// `tables`: the model has none, and the exchange has no row tables (GradientExchange::row_tables is null).
#include <cstddef>
#include <cstdint>
#include <span>

#include "exchange/gradient_exchange.h"
#include "ps/table_client.h"

namespace pstrain::modes {

class TableRowsExchange : public exchange::GradientExchange, public exchange::RowTableAccess {
 public:
  explicit TableRowsExchange(ps::TableClient* tables) : tables_(tables) {}

  exchange::RowTableAccess* row_tables() override { return tables_ != nullptr ? this : nullptr; }

  bool fetch_for_batch(std::span<float> features, const core::JaggedIds* categorical, std::size_t count,
                       std::span<float> parameters) override {
    return ps::fetch_rows_for_batch(tables_, {features, categorical, count}, parameters, timers_.pull_seconds);
  }
  bool fetch_for_evaluation(std::span<float> features, const core::JaggedIds* categorical, std::size_t count,
                            std::span<float> parameters) override {
    return ps::fetch_rows_for_evaluation(tables_, {features, categorical, count}, parameters);
  }
  const nn::CachedLookups& cached_lookups() const override { return tables_->cached_lookups(); }
  void read_table_rows(std::size_t table, std::uint64_t first, std::uint64_t count, std::span<float> out) override {
    ps::read_table_rows(tables_, table, first, count, out);
  }

 protected:
  ps::TableClient* tables_;
};

}  // namespace pstrain::modes
