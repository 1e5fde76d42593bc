#pragma once
// A counter-based random generator: the value for (key, index) is a fixed function of the two, with no state, so
// any element of a dropout mask (or any draw of an augmentation) can be computed on its own, in any order, on the
// host or in a CUDA kernel, and comes out the same. That makes random layers resumable (the key is built from
// the seed, the step, the trainer and the layer: a resumed step draws what the uninterrupted one drew) and
// device-independent. The mixing function is SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014), a
// bijection on 64 bits whose outputs pass BigCrush for consecutive inputs.
//
// Used by dropout masks (both compute backends) and image augmentation (lib/data). This header is included by nvcc
// (kernels) as well as by C++20 code: standard C++17 and <cstdint> only.
#include <cstdint>

#if defined(__CUDACC__)
#define PSTRAIN_RANDOM_HOST_DEVICE __host__ __device__
#else
#define PSTRAIN_RANDOM_HOST_DEVICE
#endif

namespace pstrain {

PSTRAIN_RANDOM_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A key for a stream of draws from its parts, in order: combine(combine(seed, step), trainer) ...
PSTRAIN_RANDOM_HOST_DEVICE inline std::uint64_t combine_key(std::uint64_t key, std::uint64_t part) {
  return mix64(key ^ mix64(part));
}

// Uniform in [0, 1) with 24 random bits: exact as a float.
PSTRAIN_RANDOM_HOST_DEVICE inline float counter_uniform(std::uint64_t key, std::uint64_t index) {
  return static_cast<float>(combine_key(key, index) >> 40) * (1.0f / 16777216.0f);
}

}  // namespace pstrain
