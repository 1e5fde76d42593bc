// embedding_bag field=F | fields=F1,F2,... dim=D rows=R [pooling=sum|mean] [limit=1/sqrt(D)] [seed=first field]:
// each sample's bag of raw 64-bit ids of a categorical field (StepContext::categorical, core/jagged_ids.h) becomes
// one vector, the sum (or mean) of the table rows its ids hash to (nn/id_hash.h, seeded by `seed`); an empty bag
// is zeros. It reads no layer: its input is the batch's fields. With field=F the output is {D}; with fields= the
// fields share one table (the same id is the same row in each) and the output is {fields, D}, a vector per field
// in the order listed. A table of dim=1 is the wide (linear) part of wide & deep and DeepFM: one weight per id.
//
// The table, `weight` {R, D}, starts U(-limit, limit) and is a row table (layer.h): a step touches only its ids'
// rows, which the servers can hold and update row by row. Its gradient is the dense R x D buffer every parameter
// has: backward overwrites it with zeros and scatter-adds into the touched rows only; or, once asked to keep it
// sparse (local training: layer.h), zeroes only the rows the step before touched and names the rows it touched,
// so that neither backward nor the optimizer walks the whole table (the same bits: the other rows hold zeros).
//
// Where the servers hold the table by rows, a trainer's model holds a cache of the rows its batch looks up
// (plan.row_table set, parameters[0] cut to the cache): the trainer fetched those rows and says where each lookup
// sits (StepContext::cached_lookups, in this layer's walk order); the layer reads and scatters there instead of
// hashing.
//
// The ids are host data, so the lookups run on the host: the layer needs a backend whose buffers are host memory
// (the CPU backend). A GPU version needs a gather-and-pool kernel in both backends; until then a GPU run of a
// model with this layer stops at build time, naming it.
#include <algorithm>
#include <cmath>

#include "nn/id_hash.h"
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

enum class Pooling { kSum, kMean };

class EmbeddingBagLayer final : public Layer {
 public:
  EmbeddingBagLayer(const LayerBuild& build, LayerAttributes& attributes)
      : backend_(build.backend),
        fields_(build.plan.categorical_fields),
        rows_(build.plan.parameters[0].shape[0]),
        dim_(build.plan.parameters[0].shape[1]),
        pooling_(attributes.choice("pooling", "sum", {"sum", "mean"}) == "mean" ? Pooling::kMean : Pooling::kSum),
        seed_(build.plan.id_hash_seed),
        hashed_rows_(build.plan.hashed_rows),
        row_table_(build.plan.row_table),
        table_(build.parameters[0]) {
    if (!backend_.host_accessible()) {
      attributes.fail(cat("runs on the CPU backend only (its ids are host data), not on ", backend_.name()));
    }
  }

  void forward(const StepContext& step, std::span<const float* const>, float* output) override {
    const core::JaggedIds& ids = checked_ids(step);
    const auto batch = static_cast<std::size_t>(step.batch);
    const std::vector<std::uint32_t>* cached = cached_rows(step);
    row_of_id_.clear();
    for (std::size_t slot = 0; slot < fields_.size(); ++slot) {
      for (std::size_t sample = 0; sample < batch; ++sample) {
        float* vector = output + (sample * fields_.size() + slot) * dim_;
        std::fill(vector, vector + dim_, 0.0f);
        const std::span<const std::uint64_t> bag = ids.bag(fields_[slot], sample);
        for (const std::uint64_t id : bag) {
          const std::uint64_t row =
              cached != nullptr ? (*cached)[row_of_id_.size()] : hashed_row(id, seed_, hashed_rows_);
          row_of_id_.push_back(row);
          const float* values = table_.value + row * dim_;
          for (std::size_t k = 0; k < dim_; ++k) vector[k] += values[k];
        }
        if (pooling_ == Pooling::kMean && !bag.empty()) {
          const float inverse = 1.0f / static_cast<float>(bag.size());
          for (std::size_t k = 0; k < dim_; ++k) vector[k] *= inverse;
        }
      }
    }
    PSTRAIN_ASSERT(cached == nullptr || cached->size() == row_of_id_.size(), "the trainer placed ",
                   cached == nullptr ? 0 : cached->size(), " lookups in the table's cache for ", row_of_id_.size(),
                   " ids");
  }

  // Walks the bags in forward's order, so the rows forward hashed are read back instead of hashed again.
  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const>) override {
    const core::JaggedIds& ids = checked_ids(step);
    const auto batch = static_cast<std::size_t>(step.batch);
    clear_table_gradient();
    std::size_t next = 0;
    for (std::size_t slot = 0; slot < fields_.size(); ++slot) {
      for (std::size_t sample = 0; sample < batch; ++sample) {
        const float* gradient = dy + (sample * fields_.size() + slot) * dim_;
        const std::size_t bag_size = ids.bag(fields_[slot], sample).size();
        const float weight = pooling_ == Pooling::kMean && bag_size > 0 ? 1.0f / static_cast<float>(bag_size) : 1.0f;
        for (std::size_t i = 0; i < bag_size; ++i) {
          float* row = table_.gradient + row_of_id_[next++] * dim_;
          for (std::size_t k = 0; k < dim_; ++k) row[k] += weight * gradient[k];
        }
      }
    }
    if (sparse_gradient_) note_touched_rows();
  }

  // Only a table the layer holds whole (not a cache of the servers' rows) on host memory, which it always is.
  bool can_keep_table_gradient_sparse() const override { return !row_table_; }
  void keep_table_gradient_sparse() override { sparse_gradient_ = true; }
  std::optional<TouchedRows> touched_rows() const override {
    if (!sparse_gradient_) return std::nullopt;
    return TouchedRows{table_.offset, dim_, rows_ * dim_, touched_};
  }

 private:
  // A batch whose fields the trainer did not give, or gave for another batch, is a wiring mistake, not data.
  const core::JaggedIds& checked_ids(const StepContext& step) const {
    PSTRAIN_ASSERT(step.categorical != nullptr,
                   "embedding_bag reads the batch's categorical fields, and the step has none "
                   "(Model::set_categorical)");
    const core::JaggedIds& ids = *step.categorical;
    PSTRAIN_ASSERT(ids.samples == static_cast<std::size_t>(step.batch), "the categorical fields hold ", ids.samples,
                   " samples for a batch of ", step.batch);
    PSTRAIN_ASSERT(ids.offsets.size() == ids.fields * ids.samples + 1, "the categorical fields' offsets hold ",
                   ids.offsets.size(), " entries for ", ids.fields, " fields x ", ids.samples, " samples");
    for (const std::size_t field : fields_) {
      PSTRAIN_ASSERT(field < ids.fields, "embedding_bag reads field ", field, " of a batch of ", ids.fields, " fields");
    }
    return ids;
  }

  // The whole table gradient to zero; with a sparse gradient (Layer::keep_table_gradient_sparse) only the rows the
  // last step touched, the rest being zero already (the first time, the whole table: nobody promised zeros yet).
  void clear_table_gradient() {
    if (!sparse_gradient_ || !gradient_clear_) {
      backend_.fill(table_.gradient, rows_ * dim_, 0.0f);
      gradient_clear_ = sparse_gradient_;
      return;
    }
    for (const std::uint64_t row : touched_) std::fill_n(table_.gradient + row * dim_, dim_, 0.0f);
  }

  // This step's distinct rows, ascending, from forward's rows.
  void note_touched_rows() {
    touched_.assign(row_of_id_.begin(), row_of_id_.end());
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
  }

  // The cache rows of this batch's lookups where the table is held by the servers (null where the layer holds it).
  const std::vector<std::uint32_t>* cached_rows(const StepContext& step) const {
    if (!row_table_) return nullptr;
    PSTRAIN_ASSERT(step.cached_lookups != nullptr && *row_table_ < step.cached_lookups->size(),
                   "embedding_bag's table is held by the servers by rows, and the step says nothing of where its "
                   "lookups sit in the cache (Model::set_cached_lookups)");
    // Every slot is below the cache's rows: ps::TableClient checks a batch's distinct rows against the cache.
    return &(*step.cached_lookups)[*row_table_];
  }

  compute::Backend& backend_;
  std::vector<std::size_t> fields_;
  std::size_t rows_;
  std::size_t dim_;
  Pooling pooling_;
  std::uint64_t seed_;
  std::uint64_t hashed_rows_;             // the whole table's rows: what ids hash into
  std::optional<std::size_t> row_table_;  // set: the servers hold the table, this layer a cache of it
  ParameterView table_;
  std::vector<std::uint64_t> row_of_id_;  // forward's rows, in bag order: what backward scatters into
  bool sparse_gradient_ = false;          // Layer::keep_table_gradient_sparse
  bool gradient_clear_ = false;           // sparse: the gradient is zero outside touched_
  std::vector<std::uint64_t> touched_;    // sparse: the last backward's rows, distinct and ascending
};

LayerPlan plan_embedding_bag(LayerAttributes& attributes, const std::vector<Shape>&) {
  const bool one_field = attributes.has("field");
  if (one_field == attributes.has("fields")) {
    attributes.fail("needs field=F (a table of its own) or fields=F1,F2,... (a table the fields share), not both");
  }
  LayerPlan plan;
  plan.categorical_fields = one_field ? std::vector<std::size_t>{attributes.non_negative("field", 0)}
                                      : attributes.non_negative_list("fields");
  const std::size_t rows = attributes.positive("rows");
  const std::size_t dim = attributes.positive("dim");
  const float limit =
      attributes.number("limit", static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))), 0.0f, 1e30f);
  // pooling is the layer's own business, read here too so that a bad value fails before any trainer builds it.
  attributes.choice("pooling", "sum", {"sum", "mean"});
  plan.id_hash_seed = attributes.non_negative("seed", plan.categorical_fields[0]);
  plan.hashed_rows = rows;
  plan.output = one_field ? Shape{dim} : Shape{plan.categorical_fields.size(), dim};
  plan.parameters.push_back({"weight", {rows, dim}, {InitRule::Kind::kCounterUniform, limit}, /*row_table=*/true});
  return plan;
}

}  // namespace

void register_embedding_bag(LayerRegistry& registry) {
  registry.add({.name = "embedding_bag",
                .summary = "a categorical field's bag of ids -> the sum or mean of hashed table rows: field=F | "
                           "fields=F1,F2,... rows=R dim=D [pooling=sum|mean] [limit=1/sqrt(D)] [seed=F]",
                .min_inputs = 0,
                .max_inputs = 0,
                .plan = plan_embedding_bag,
                .create = [](const LayerBuild& build, LayerAttributes& attributes) {
                  return std::make_unique<EmbeddingBagLayer>(build, attributes);
                }});
}

}  // namespace pstrain::nn
