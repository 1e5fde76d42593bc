#pragma once
// The categorical fields of a batch of click-log samples: for each field, each sample holds a bag of raw 64-bit
// ids (zero or more; an empty bag is allowed). Laid out as TorchRec's KeyedJaggedTensor: field-major, so that
// field f's bags are one contiguous run. The data layer writes it (lib/data/ctr: jagged shards), the embedding
// layers read it (lib/nn/layers: embedding_bag), and the table exchange resolves its ids to rows on the servers.
// Ids stay 64-bit integers end to end: never carried as floats, never hashed before a layer asks for a row.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pstrain::core {

struct JaggedIds {
  std::size_t fields = 0;
  std::size_t samples = 0;
  // Field f, sample s: values[offsets[f * samples + s] .. offsets[f * samples + s + 1]).
  std::vector<std::uint64_t> values;
  std::vector<std::uint64_t> offsets;  // fields * samples + 1 entries, offsets[0] == 0, non-decreasing

  std::span<const std::uint64_t> bag(std::size_t field, std::size_t sample) const {
    const std::size_t at = field * samples + sample;
    return {values.data() + offsets[at], static_cast<std::size_t>(offsets[at + 1] - offsets[at])};
  }
  // Field f's bags of every sample, and where each starts (relative to the field's first id).
  std::span<const std::uint64_t> field_values(std::size_t field) const {
    const std::size_t first = offsets[field * samples];
    const std::size_t last = offsets[(field + 1) * samples];
    return {values.data() + first, last - first};
  }
  // Ids of every bag (0 for none).
  std::size_t id_count() const { return offsets.empty() ? 0 : static_cast<std::size_t>(offsets.back()); }
};

// The bags of samples `samples` of `ids`, in that order (a sample may repeat): a trainer's shuffled batch.
JaggedIds gather_samples(const JaggedIds& ids, std::span<const std::uint32_t> samples);
// The bags of samples [first, first + count).
JaggedIds sample_range(const JaggedIds& ids, std::size_t first, std::size_t count);
// `more`'s samples after `into`'s (the same fields; an empty `into`, of no fields and no samples, takes `more`).
void append_samples(JaggedIds& into, const JaggedIds& more);

}  // namespace pstrain::core
