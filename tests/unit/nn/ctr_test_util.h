#pragma once
// Batches of categorical fields for the CTR layer tests: bags of raw 64-bit ids, some empty, some holding one id
// twice, ids above 2^53 (where a float or a double would merge neighbours).
#include <cstdint>
#include <random>
#include <vector>

#include "core/jagged_ids.h"

namespace pstrain::nn::testing {

// Field f of sample s holds (s + f) % 4 ids (so some bags are empty) drawn from a small pool per field, so that
// samples share ids and a bag can repeat one.
inline core::JaggedIds random_fields(std::size_t fields, std::size_t samples, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  core::JaggedIds ids;
  ids.fields = fields;
  ids.samples = samples;
  ids.offsets.push_back(0);
  for (std::size_t f = 0; f < fields; ++f) {
    for (std::size_t s = 0; s < samples; ++s) {
      for (std::size_t k = 0; k < (s + f) % 4; ++k) ids.values.push_back((1ULL << 60) + engine() % 5);
      ids.offsets.push_back(ids.values.size());
    }
  }
  return ids;
}

// Bags given by hand: bags[f][s].
inline core::JaggedIds fields_of(const std::vector<std::vector<std::vector<std::uint64_t>>>& bags) {
  core::JaggedIds ids;
  ids.fields = bags.size();
  ids.samples = bags.empty() ? 0 : bags[0].size();
  ids.offsets.push_back(0);
  for (const auto& field : bags) {
    for (const auto& bag : field) {
      ids.values.insert(ids.values.end(), bag.begin(), bag.end());
      ids.offsets.push_back(ids.values.size());
    }
  }
  return ids;
}

}  // namespace pstrain::nn::testing
