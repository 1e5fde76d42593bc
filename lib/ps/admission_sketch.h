#pragma once
// How often a keyed table (keyed_rows.h) has seen an id that holds no row yet, counted without giving it one:
// a count-min sketch (Cormode and Muthukrishnan, J. Algorithms 2005) of depth d rows of w saturating 16-bit
// counters, with conservative update (a sighting raises only the counters that hold the current minimum, to the
// minimum + 1; Estan and Varghese, SIGCOMM 2002). The table admits an id once its estimate reaches the policy's
// threshold, so memory for rare ids is d * w * 2 bytes in all, not a row per id.
//
// Guarantees, for a stream of N sightings: the estimate never undercounts (up to the saturation value 65535),
// and with w >= e / eps and d >= ln(1 / delta) it overcounts by more than eps * N with probability at most delta.
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

  // Throws pstrain::Error(kUsage) for depth or width 0.
  AdmissionSketch(std::uint32_t depth, std::uint64_t width, std::uint64_t seed, std::uint64_t table);

  // Counts one sighting of `id`; returns its estimate after it.
  std::uint32_t add(std::int64_t id);
  std::uint32_t estimate(std::int64_t id) const;

  std::uint32_t depth() const { return depth_; }
  std::uint64_t width() const { return width_; }
  std::size_t bytes() const { return counters_.size() * sizeof(std::uint16_t); }

  // Checkpoint state: the depth * width counters, row by row.
  std::span<const std::uint16_t> counters() const { return counters_; }
  // Throws pstrain::Error(kInputData) when the count differs from depth * width.
  void load(std::span<const std::uint16_t> counters);

 private:
  std::size_t slot(std::uint32_t row, std::int64_t id) const;

  std::uint32_t depth_;
  std::uint64_t width_;
  std::vector<std::uint64_t> row_keys_;  // combine_key(combine_key(seed, table), row)
  std::vector<std::uint16_t> counters_;
};

}  // namespace pstrain::ps
