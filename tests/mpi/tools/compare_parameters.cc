// Test tool: compares the parameters.h5 of two pass folders, dataset by dataset; the keys of keyed tables
// (keys/<table>, int64) must be equal.
//
// usage: compare_parameters PASS_A PASS_B (--exact | --rtol R)
// --exact: every float must have the same bits. --rtol: for every parameter, max|a-b| / max|b| <= R.
// Prints the worst relative difference; exits 0 when within bounds, 1 otherwise.
#include <H5Cpp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

using Keys = std::map<std::string, std::vector<std::int64_t>>;

Keys read_keys(const H5::H5File& file) {
  Keys keys;
  if (!file.nameExists("keys")) return keys;
  const H5::Group group = file.openGroup("keys");
  for (hsize_t i = 0; i < group.getNumObjs(); ++i) {
    const std::string name = group.getObjnameByIdx(i);
    const H5::DataSet dataset = group.openDataSet(name);
    std::vector<std::int64_t> values(static_cast<std::size_t>(dataset.getSpace().getSimpleExtentNpoints()));
    if (!values.empty()) dataset.read(values.data(), H5::PredType::NATIVE_INT64);
    keys[name] = std::move(values);
  }
  return keys;
}

std::map<std::string, std::vector<float>> read_all(const std::filesystem::path& pass_dir, Keys& keys) {
  std::map<std::string, std::vector<float>> tensors;
  H5::H5File file((pass_dir / "parameters.h5").string(), H5F_ACC_RDONLY);
  keys = read_keys(file);
  for (hsize_t i = 0; i < file.getNumObjs(); ++i) {
    const std::string name = file.getObjnameByIdx(i);
    if (name == "keys") continue;
    H5::DataSet dataset = file.openDataSet(name);
    const auto count = static_cast<std::size_t>(dataset.getSpace().getSimpleExtentNpoints());
    std::vector<float> values(count);
    dataset.read(values.data(), H5::PredType::NATIVE_FLOAT);
    tensors[name] = std::move(values);
  }
  return tensors;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: compare_parameters PASS_A PASS_B (--exact | --rtol R)\n";
    return 2;
  }
  const bool exact = std::string(argv[3]) == "--exact";
  const double rtol = exact ? 0.0 : std::stod(argv[4]);
  try {
    Keys keys_a, keys_b;
    const auto a = read_all(argv[1], keys_a);
    const auto b = read_all(argv[2], keys_b);
    if (keys_a != keys_b) {
      std::cerr << "the keyed tables hold different ids (" << keys_a.size() << " and " << keys_b.size()
                << " keyed tables)\n";
      return 1;
    }
    if (a.size() != b.size() || a.empty()) {
      std::cerr << "different parameter sets: " << a.size() << " vs " << b.size() << "\n";
      return 1;
    }
    double worst = 0;
    bool ok = true;
    for (const auto& [name, values] : a) {
      const auto other = b.find(name);
      if (other == b.end() || other->second.size() != values.size()) {
        std::cerr << name << ": missing or different size\n";
        return 1;
      }
      double max_difference = 0;
      double max_magnitude = 0;
      for (std::size_t i = 0; i < values.size(); ++i) {
        max_difference = std::max(max_difference, std::abs(double(values[i]) - double(other->second[i])));
        max_magnitude = std::max(max_magnitude, std::abs(double(other->second[i])));
      }
      const double relative = max_magnitude > 0 ? max_difference / max_magnitude : max_difference;
      worst = std::max(worst, relative);
      const bool same_bits = std::memcmp(values.data(), other->second.data(), values.size() * sizeof(float)) == 0;
      if (exact ? !same_bits : !(relative <= rtol)) {
        std::cerr << name << ": relative difference " << relative << (exact ? " (bits differ)" : "") << "\n";
        ok = false;
      }
    }
    std::cout << "worst relative difference " << worst << (ok ? " (ok)" : " (FAIL)") << "\n";
    return ok ? 0 : 1;
  } catch (const H5::Exception& error) {
    std::cerr << "compare_parameters: " << error.getDetailMsg() << "\n";
    return 2;
  }
}
