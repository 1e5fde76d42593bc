#pragma once
// How often a keyed table (keyed_rows.h) has seen an id that holds no row yet, counted without giving it one:
// a count-min sketch (Cormode and Muthukrishnan, J. Algorithms 2005) of depth d rows of w saturating 16-bit
// counters, with conservative update (a sighting raises only the counters that hold the current minimum, to the
// minimum + 1; Estan and Varghese, SIGCOMM 2002). The table admits an id once its estimate reaches the policy's
// threshold, so memory for rare ids is d * w * 2 bytes in all, not a row per id.
//
// Guarantees, for a stream of N sightings: the estimate never undercounts (up to the saturation value 65535),
// and with w >= e / eps and d >= ln(1 / delta) it overcounts by more than eps * N with probability at most delta.
//
// Aging (TinyLFU's reset, Einziger et al., ACM ToS 2017): with halve_every = W, every W-th sighting halves every
// counter, so the estimate counts recent sightings (about the last W to 2W) and N stays near W: without it, a long
// stream of rare ids would fill the counters until every id looked frequent. A function of the sightings' count,
// so runs repeat their bits; checkpoints keep that count (sightings()).
// Row r hashes id to combine_key(combine_key(combine_key(seed, table), r), id) mod w: a function of (seed, table,
// row, id) only, so every server and every resume counts the same id in the same counters.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pstrain::ps {

class AdmissionSketch {
 public:
  static constexpr std::uint32_t kMaxCount = 65535;

  // Throws pstrain::Error(kUsage) for depth or width 0. halve_every 0: never.
  AdmissionSketch(std::uint32_t depth, std::uint64_t width, std::uint64_t seed, std::uint64_t table,
                  std::uint64_t halve_every = 0);

  // Counts one sighting of `id`; returns its estimate after it.
  std::uint32_t add(std::int64_t id);
  std::uint32_t estimate(std::int64_t id) const;

  std::uint32_t depth() const { return depth_; }
  std::uint64_t width() const { return width_; }
  std::size_t bytes() const { return counters_.size() * sizeof(std::uint16_t); }

  // Checkpoint state: the depth * width counters, row by row.
  std::span<const std::uint16_t> counters() const { return counters_; }
  // Sightings since the counters were last halved.
  std::uint64_t sightings() const { return sightings_; }
  // Throws pstrain::Error(kInputData) when the count differs from depth * width.
  void load(std::span<const std::uint16_t> counters, std::uint64_t sightings = 0);

 private:
  std::size_t slot(std::uint32_t row, std::int64_t id) const;

  std::uint32_t depth_;
  std::uint64_t width_;
  std::vector<std::uint64_t> row_keys_;  // combine_key(combine_key(seed, table), row)
  std::vector<std::uint16_t> counters_;
  std::uint64_t halve_every_;
  std::uint64_t sightings_ = 0;
};

}  // namespace pstrain::ps
