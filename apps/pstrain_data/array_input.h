#pragma once
// Reading a user's own labelled arrays for pstrain-data npz|npy|csv: each split's features and labels, checked
// against each other, as Samples (num_classes still 0: array_convert.cc sets it once every split is read).
#include <optional>

#include "data/shard.h"
#include "options.h"

namespace pstrain_data {

struct ArraySplits {
  pstrain::data::Samples train;
  std::optional<pstrain::data::Samples> valid;  // csv --valid FILE only; otherwise carved by --valid-fraction
  std::optional<pstrain::data::Samples> test;   // absent: carved from train by --test-fraction
};

// Throws pstrain::Error naming the file (and array, or line) for anything it cannot use.
ArraySplits read_array_input(const Options& options);

}  // namespace pstrain_data
