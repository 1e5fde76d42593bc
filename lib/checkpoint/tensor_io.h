#pragma once
// One HDF5 dataset per parameter, named ("fc1.weight") and shaped as the model declares it: the layout of a pass
// folder's parameters.h5 and of each group in a checkpoint's model.h5. Callers catch H5::Exception.
#include <H5Cpp.h>

#include <span>
#include <string>
#include <vector>

#include "nn/model.h"

namespace pstrain::checkpoint {

void write_tensors(H5::Group& group, const std::vector<nn::ParameterInfo>& parameters, std::span<const float> flat);

// Reads every parameter into the model's flat layout; a missing parameter, another type or another shape is
// Error(kInputData) naming `where`, the parameter and both shapes.
std::vector<float> read_tensors(const H5::Group& group, const std::string& where,
                                const std::vector<nn::ParameterInfo>& parameters, std::size_t flat_size);

}  // namespace pstrain::checkpoint
