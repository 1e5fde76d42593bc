#include "hdf5/attributes.h"

#include "core/error.h"

namespace pstrain::hdf5 {

void write_string_attribute(H5::H5Object& target, const char* name, const std::string& value) {
  const H5::StrType type(H5::PredType::C_S1, std::max<std::size_t>(value.size(), 1));
  target.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value);
}

H5::Attribute open_single_attribute(const H5::H5Object& source, const std::filesystem::path& path, const char* name,
                                    H5T_class_t type_class, const char* expected) {
  if (!source.attrExists(name)) {
    throw Error(ExitCode::kInputData,
                cat(path.string(), ": missing attribute '", name, "' (not a pstrain checkpoint?)"));
  }
  H5::Attribute attribute = source.openAttribute(name);
  if (attribute.getTypeClass() != type_class || attribute.getSpace().getSimpleExtentNpoints() != 1) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": attribute '", name, "' must be a single ", expected));
  }
  return attribute;
}

std::string read_string_attribute(const H5::H5Object& source, const std::filesystem::path& path, const char* name) {
  const H5::Attribute attribute = open_single_attribute(source, path, name, H5T_STRING, "string");
  // pstrain writes fixed-length strings; a variable-length one would send HDF5 into its global heap, whose
  // parser in HDF5 1.10 can loop for ever on a damaged file (found by fuzzing).
  if (attribute.getStrType().isVariableStr()) {
    throw Error(ExitCode::kInputData, cat(path.string(), ": attribute '", name,
                                          "' is a variable-length string; pstrain writes fixed-length ones"));
  }
  std::string value;
  attribute.read(attribute.getStrType(), value);
  return value;
}

}  // namespace pstrain::hdf5
