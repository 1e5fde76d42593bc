// CtrColumns: samples column by column, and their field-major JaggedIds.
#include "core/error.h"
#include "data/ctr/ctr_shard.h"

namespace pstrain::data::ctr {

void CtrColumns::append(const CtrColumns& other, std::size_t first, std::size_t count, std::size_t dense_count) {
  PSTRAIN_ASSERT(other.fields() == fields() && first + count <= other.samples, "append rows ", first, "+", count,
                 " of ", other.samples, " samples, ", other.fields(), " fields into ", fields());
  const auto from = static_cast<std::ptrdiff_t>(first);
  const auto to = static_cast<std::ptrdiff_t>(first + count);
  const auto d = static_cast<std::ptrdiff_t>(dense_count);
  dense.insert(dense.end(), other.dense.begin() + from * d, other.dense.begin() + to * d);
  labels.insert(labels.end(), other.labels.begin() + from, other.labels.begin() + to);
  for (std::size_t f = 0; f < fields(); ++f) {
    const std::vector<std::uint64_t>& offsets_in = other.offsets[f];
    const std::uint64_t base = offsets_in[first];
    const std::uint64_t shift = values[f].size();
    values[f].insert(values[f].end(), other.values[f].begin() + static_cast<std::ptrdiff_t>(base),
                     other.values[f].begin() + static_cast<std::ptrdiff_t>(offsets_in[first + count]));
    for (std::size_t s = first + 1; s <= first + count; ++s) offsets[f].push_back(offsets_in[s] - base + shift);
  }
  samples += count;
}

core::JaggedIds jagged_ids_of(const CtrColumns& columns, std::size_t first, std::size_t count) {
  PSTRAIN_ASSERT(first + count <= columns.samples, "rows ", first, "+", count, " of ", columns.samples);
  core::JaggedIds ids;
  ids.fields = columns.fields();
  ids.samples = count;
  ids.offsets.reserve(ids.fields * count + 1);
  ids.offsets.push_back(0);
  for (std::size_t f = 0; f < ids.fields; ++f) {
    const std::vector<std::uint64_t>& offsets = columns.offsets[f];
    const std::uint64_t base = offsets[first];
    const std::uint64_t shift = ids.values.size();
    ids.values.insert(ids.values.end(), columns.values[f].begin() + static_cast<std::ptrdiff_t>(base),
                      columns.values[f].begin() + static_cast<std::ptrdiff_t>(offsets[first + count]));
    for (std::size_t s = first + 1; s <= first + count; ++s) ids.offsets.push_back(offsets[s] - base + shift);
  }
  return ids;
}

}  // namespace pstrain::data::ctr
