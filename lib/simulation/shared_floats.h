#pragma once
// Floats every simulated rank shares (SMPI_SHARED_MALLOC): one allocation for all ranks that make it here, so a
// buffer whose values nothing checks costs the host's memory once instead of once per rank. SimGrid runs every
// rank in one process with its real buffers; a parameter-server trainer's parameters and gradient (26 MB each for
// ResNet width 1) are put to and read from the servers, whose timing the simulation measures, but no value of
// them decides anything there. Not for all-reduce trainers: their replica check compares what each computed.
#include <cstddef>
#include <span>

namespace pstrain::simulation {

class SharedFloats {
 public:
  // `size` floats, each set to `value` (every rank writes the same value into the same memory).
  SharedFloats(std::size_t size, float value);
  ~SharedFloats();
  SharedFloats(const SharedFloats&) = delete;
  SharedFloats& operator=(const SharedFloats&) = delete;

  std::span<float> span() { return {data_, size_}; }

 private:
  float* data_;
  std::size_t size_;
};

}  // namespace pstrain::simulation
