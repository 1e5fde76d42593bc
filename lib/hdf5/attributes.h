#pragma once
// Scalar HDF5 attributes as pstrain's files (checkpoints, row files) write and check them. Readers check the class and
// the count before reading: HDF5 writes as many elements as the attribute holds, so an array attribute read into a
// single variable would overflow it. Callers catch H5::Exception.
#include <H5Cpp.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace pstrain::hdf5 {

template <typename T>
void write_attribute(H5::H5Object& target, const char* name, const H5::PredType& type, T value) {
  target.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, &value);
}

void write_string_attribute(H5::H5Object& target, const char* name, const std::string& value);

// One value of class `type_class`; Error(kInputData) naming `path` and the attribute otherwise.
H5::Attribute open_single_attribute(const H5::H5Object& source, const std::filesystem::path& path, const char* name,
                                    H5T_class_t type_class, const char* expected);

template <typename T>
T read_attribute(const H5::H5Object& source, const std::filesystem::path& path, const char* name,
                 const H5::PredType& type) {
  T value{};
  open_single_attribute(source, path, name, H5T_INTEGER, "integer").read(type, &value);
  return value;
}

std::string read_string_attribute(const H5::H5Object& source, const std::filesystem::path& path, const char* name);

}  // namespace pstrain::hdf5
