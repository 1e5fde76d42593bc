#pragma once
// Test helpers that move data through the Backend interface only, so these tests stay valid for a backend whose
// memory is not host memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "compute/backend.h"

namespace pstrain::compute::testing {

template <typename T>
Buffer<T> to_backend(Backend& backend, const std::vector<T>& host) {
  Buffer<T> buffer(backend, host.size());
  backend.copy_from_host(buffer.data(), host.data(), host.size() * sizeof(T));
  return buffer;
}

template <typename T>
std::vector<T> to_host(Backend& backend, const Buffer<T>& buffer) {
  std::vector<T> host(buffer.size());
  backend.copy_to_host(host.data(), buffer.data(), host.size() * sizeof(T));
  return host;
}

inline std::vector<float> random_floats(std::size_t count, std::uint64_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> distribution(low, high);  // tests only: determinism across platforms not needed
  std::vector<float> values(count);
  for (float& value : values) value = distribution(engine);
  return values;
}

class BackendTest : public ::testing::Test {
 protected:
  std::unique_ptr<Backend> backend_ = make_cpu_backend();
};

}  // namespace pstrain::compute::testing
