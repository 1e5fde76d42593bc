#pragma once
#include "options.h"

namespace pstrain_data {

// pstrain-data npz|npy|csv: a user's own labelled arrays (array_input.h) shuffled with --seed (unless
// --keep-order), the test split carved from the end of the training samples when no test file is given
// (--test-fraction), then the validation split (--valid-fraction, or csv --valid FILE), the rest cut into
// --split-count train shards. num_classes is --num-classes or the largest label + 1. Everything is read and checked
// before anything is written: bad input writes nothing.
void convert_arrays(const Options& options);

}  // namespace pstrain_data
