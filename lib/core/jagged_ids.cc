#include "core/jagged_ids.h"

#include <numeric>

#include "core/error.h"

namespace pstrain::core {

namespace {

// Appends field `field` of `ids` for `samples` to `out` (values and end offsets).
template <typename Samples>
void copy_field(const JaggedIds& ids, std::size_t field, const Samples& samples, JaggedIds& out) {
  for (const auto sample : samples) {
    PSTRAIN_ASSERT(sample < ids.samples, "sample ", sample, " of ", ids.samples);
    const std::span<const std::uint64_t> bag = ids.bag(field, sample);
    out.values.insert(out.values.end(), bag.begin(), bag.end());
    out.offsets.push_back(out.values.size());
  }
}

}  // namespace

JaggedIds gather_samples(const JaggedIds& ids, std::span<const std::uint32_t> samples) {
  JaggedIds out;
  out.fields = ids.fields;
  out.samples = samples.size();
  out.offsets.reserve(out.fields * out.samples + 1);
  out.offsets.push_back(0);
  for (std::size_t field = 0; field < ids.fields; ++field) copy_field(ids, field, samples, out);
  return out;
}

JaggedIds sample_range(const JaggedIds& ids, std::size_t first, std::size_t count) {
  PSTRAIN_ASSERT(first + count <= ids.samples, "samples ", first, "+", count, " of ", ids.samples);
  std::vector<std::uint32_t> samples(count);
  std::iota(samples.begin(), samples.end(), static_cast<std::uint32_t>(first));
  return gather_samples(ids, samples);
}

void append_samples(JaggedIds& into, const JaggedIds& more) {
  if (into.fields == 0 && into.samples == 0) {
    into = more;
    return;
  }
  PSTRAIN_ASSERT(into.fields == more.fields, "appending bags of ", more.fields, " fields to bags of ", into.fields);
  JaggedIds joined;
  joined.fields = into.fields;
  joined.samples = into.samples + more.samples;
  joined.values.reserve(into.values.size() + more.values.size());
  joined.offsets.reserve(joined.fields * joined.samples + 1);
  joined.offsets.push_back(0);
  std::vector<std::uint32_t> first(into.samples), second(more.samples);
  std::iota(first.begin(), first.end(), 0U);
  std::iota(second.begin(), second.end(), 0U);
  for (std::size_t field = 0; field < joined.fields; ++field) {
    copy_field(into, field, first, joined);
    copy_field(more, field, second, joined);
  }
  into = std::move(joined);
}

}  // namespace pstrain::core
