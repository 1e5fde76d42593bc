#pragma once
// The small model the checkpoint fuzz targets load into (an MLP 4-3-2, 23 parameters) and the data it was
// trained on (two shards of 5 and 7 samples); make_seeds.cc writes the seed files for the same model.
#include <vector>

#include "nn/model.h"

namespace pstrain::fuzz {

inline std::vector<nn::ParameterInfo> fuzz_model_parameters() {
  return {{"fc1.weight", {3, 4}, 0, 12},
          {"fc1.bias", {3}, 12, 3},
          {"fc2.weight", {2, 3}, 15, 6},
          {"fc2.bias", {2}, 21, 2}};
}
inline constexpr std::size_t kFuzzModelSize = 23;
inline const std::vector<std::uint64_t> kFuzzShardSizes = {5, 7};

}  // namespace pstrain::fuzz
