#pragma once
// Which elements of an optimizer's slice get weight decay, when biases and normalisation parameters are left out
// (--no-decay-bias-and-norm). The rule is optim::decays over the parameter names; this file maps it onto the flat
// vector and then onto one shard's slice, so the mask follows the slice wherever the plan put its blocks.
#include <cstdint>
#include <vector>

#include "nn/model.h"
#include "optim/optimizer.h"
#include "ps/shard_plan.h"

namespace pstrain::run_common {

// One entry per element of shard `shard`'s slice (1: decays), or empty when every element decays (the default,
// or no weight decay at all), which the optimizers take as "decay everything".
std::vector<std::uint8_t> decay_mask(const optim::OptimizerConfig& config,
                                     const std::vector<nn::ParameterInfo>& parameters, const ps::ShardPlan& plan,
                                     int shard);

}  // namespace pstrain::run_common
