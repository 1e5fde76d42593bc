#pragma once
// The click-through-rate presets (presets.h): model-file text for --model dlrm and --model deepfm over CTR data.
// One table per categorical field (embedding_bag field=i), sized by PresetOptions::field_rows; ids hashed into
// its rows (id_hash.h), so the sizes are the model's choice (run_common/model_factory.cc sizes them from the data's
// recorded distinct ids).
#include <cstddef>
#include <cstdint>
#include <string>

#include "nn/presets.h"

namespace pstrain::nn {

// The rows of a field's table from its distinct ids n (what --table-rows auto gives): 2n to a power of two, within
// [16, 2^22]. An id then shares its row with another with probability about 1 - e^(-1/2) = 39% when all n ids are
// equally frequent (id_hash.h), far less for the frequent ids of click logs' Zipf-like fields.
std::size_t click_table_rows(std::uint64_t distinct_ids);

// DLRM (Naumov et al. 2019, arXiv:1906.00091): bottom MLP dense features -> bottom_hidden... -> embedding_dim
// (relu after each), a table of embedding_dim per field, dot_interaction over the bottom vector and the field
// vectors, top MLP `hidden`... (relu) -> one logit, loss=bce. Error(kUsage) without dense features or fields.
std::string dlrm_text(const PresetOptions& options);

// DeepFM (Guo et al. 2017, IJCAI): per field a weight table (dim 1, summed: the linear part over ids) and a
// vector table (embedding_dim); fm over the field vectors; a deep MLP `hidden`... (relu) over the dense features
// and the field vectors, concatenated, to one logit; the logit is the sum of the three, loss=bce. Error(kUsage)
// with fewer than 2 fields.
std::string deepfm_text(const PresetOptions& options);

}  // namespace pstrain::nn
