#include "checkpoint/tensor_io.h"

#include <algorithm>

#include "core/error.h"
#include "core/join_numbers.h"
#include "hdf5/dataset_storage.h"

namespace pstrain::checkpoint {

void write_tensors(H5::Group& group, const std::vector<nn::ParameterInfo>& parameters, std::span<const float> flat) {
  for (const nn::ParameterInfo& parameter : parameters) {
    const std::vector<hsize_t> dims(parameter.shape.begin(), parameter.shape.end());
    const H5::DataSpace space(static_cast<int>(dims.size()), dims.data());
    H5::DataSet dataset = group.createDataSet(parameter.name, H5::PredType::NATIVE_FLOAT, space);
    dataset.write(flat.data() + parameter.offset, H5::PredType::NATIVE_FLOAT);
  }
}

std::vector<float> read_tensors(const H5::Group& group, const std::string& where,
                                const std::vector<nn::ParameterInfo>& parameters, std::size_t flat_size) {
  std::vector<float> flat(flat_size, 0.0f);
  for (const nn::ParameterInfo& parameter : parameters) {
    if (!group.nameExists(parameter.name)) {
      throw Error(ExitCode::kInputData,
                  cat(where, " has no parameter '", parameter.name, "' (saved from another model?)"));
    }
    const H5::DataSet dataset = group.openDataSet(parameter.name);
    if (dataset.getTypeClass() != H5T_FLOAT) {
      throw Error(ExitCode::kInputData, cat(where, ": '", parameter.name, "' is not a float dataset"));
    }
    // HDF5 sizes its conversion buffer by the file's element size: a damaged file claiming 1.9 GB per float made
    // it allocate that much (found by fuzzing). pstrain writes 32-bit floats; 64-bit ones convert as well.
    const std::size_t element_bytes = dataset.getDataType().getSize();
    if (element_bytes != 4 && element_bytes != 8) {
      throw Error(ExitCode::kInputData, cat(where, ": '", parameter.name, "' holds floats of ", element_bytes,
                                            " bytes; expected 32-bit (or 64-bit) floats (damaged file?)"));
    }
    const H5::DataSpace space = dataset.getSpace();
    std::vector<hsize_t> dims(static_cast<std::size_t>(space.getSimpleExtentNdims()));
    space.getSimpleExtentDims(dims.data());
    if (!std::equal(dims.begin(), dims.end(), parameter.shape.begin(), parameter.shape.end())) {
      throw Error(ExitCode::kInputData,
                  cat(where, ": '", parameter.name, "' has shape ", join_numbers(dims, "x"), " but the model needs ",
                      join_numbers(parameter.shape, "x"), " (saved from another model?)"));
    }
    const auto elements = static_cast<std::uint64_t>(space.getSimpleExtentNpoints());
    hdf5::check_dataset_storage(dataset, where, parameter.name, element_bytes * elements);
    dataset.read(flat.data() + parameter.offset, H5::PredType::NATIVE_FLOAT);
  }
  return flat;
}

}  // namespace pstrain::checkpoint
