// Test tool: writes a small synthetic shard with chosen width, classes and labels, to build bad inputs
// (a shard of another width, labels out of range) next to real ones.
//
// usage: make_shard PATH WIDTH CLASSES COUNT LABEL [SHAPE]
// SHAPE: the samples' shape as the real shards beside it record it (e.g. 28x28), its product WIDTH; default WIDTH.
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "data/shard.h"

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::cerr << "usage: make_shard PATH WIDTH CLASSES COUNT LABEL [SHAPE]\n";
    return 2;
  }
  pstrain::data::Samples samples;
  const std::size_t width = std::strtoul(argv[2], nullptr, 10);
  const std::size_t count = std::strtoul(argv[4], nullptr, 10);
  samples.meta.dataset = "synthetic";
  samples.meta.sample_shape = {width};
  if (argc == 7) {
    samples.meta.sample_shape.clear();
    std::istringstream shape(argv[6]);
    for (std::string extent; std::getline(shape, extent, 'x');) {
      samples.meta.sample_shape.push_back(std::strtoull(extent.c_str(), nullptr, 10));
    }
    if (samples.meta.sample_size() != width) {
      std::cerr << "make_shard: shape " << argv[6] << " does not hold " << width << " features\n";
      return 2;
    }
  }
  samples.meta.num_classes = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  samples.meta.sample_count = count;
  samples.meta.source = "make_shard";
  samples.features.assign(count * width, 0.5f);
  samples.labels.assign(count, static_cast<std::int32_t>(std::strtol(argv[5], nullptr, 10)));
  try {
    pstrain::data::write_shard(argv[1], samples);
  } catch (const std::exception& error) {
    std::cerr << "make_shard: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
