#pragma once
// Distinct-count estimate of a stream of 64-bit ids in fixed memory (Flajolet, Fusy, Gandouet and Meunier, 2007,
// with linear counting below 5/2 m as they recommend): what pstrain-data records per categorical field, where an
// exact count of Criteo's ~10 million ids per field would take hundreds of MB. With 2^14 registers the relative
// standard error is 1.04 / sqrt(2^14) = 0.81%; counts below ~40,000 come from linear counting, nearly exact.
// Estimators of disjoint parts of a stream merge into the estimator of the whole (register-wise maximum), so
// threads each keep their own.
#include <cstdint>
#include <vector>

namespace pstrain::data::ctr {

class HyperLogLog {
 public:
  static constexpr unsigned kPrecision = 14;  // 2^14 one-byte registers: 16 KiB
  static constexpr double kRelativeError = 1.04 / 128.0;

  HyperLogLog() : registers_(std::size_t{1} << kPrecision, 0) {}

  void add(std::uint64_t id);
  void merge(const HyperLogLog& other);
  double estimate() const;

 private:
  std::vector<std::uint8_t> registers_;
};

}  // namespace pstrain::data::ctr
