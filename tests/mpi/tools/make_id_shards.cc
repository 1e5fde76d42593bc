// Tool for the large-table benchmark and its test: writes a data folder of samples that are IDS integer ids in
// [0, ROWS) each (as floats, exact below 2^24), drawn so that low ids are frequent (id = floor(ROWS * u^3), as a
// vocabulary sorted by frequency), labelled by the first id (id mod CLASSES): a model that learns its table's
// rows learns the labels of the ids it has seen. SHARDS training shards of COUNT samples each, and a test shard
// of COUNT samples; the same seed gives the same files.
//
// usage: make_id_shards DIR ROWS IDS CLASSES COUNT SHARDS SEED
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>

#include "data/shard.h"

namespace {

pstrain::data::Samples draw(std::uint64_t rows, std::size_t ids, std::uint32_t classes, std::size_t count,
                            std::mt19937_64& engine) {
  pstrain::data::Samples samples;
  samples.meta.dataset = "synthetic-ids";
  samples.meta.sample_shape = {ids};
  samples.meta.num_classes = classes;
  samples.meta.sample_count = count;
  samples.meta.source = "make_id_shards";
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::size_t s = 0; s < count; ++s) {
    for (std::size_t k = 0; k < ids; ++k) {
      const double u = unit(engine);
      const auto id =
          std::min<std::uint64_t>(rows - 1, static_cast<std::uint64_t>(static_cast<double>(rows) * u * u * u));
      samples.features.push_back(static_cast<float>(id));
      if (k == 0) samples.labels.push_back(static_cast<std::int32_t>(id % classes));
    }
  }
  return samples;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: make_id_shards DIR ROWS IDS CLASSES COUNT SHARDS SEED\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const std::uint64_t rows = std::strtoull(argv[2], nullptr, 10);
  const std::size_t ids = std::strtoul(argv[3], nullptr, 10);
  const auto classes = static_cast<std::uint32_t>(std::strtoul(argv[4], nullptr, 10));
  const std::size_t count = std::strtoul(argv[5], nullptr, 10);
  const std::size_t shards = std::strtoul(argv[6], nullptr, 10);
  std::mt19937_64 engine(std::strtoull(argv[7], nullptr, 10));
  if (rows == 0 || rows > pstrain::data::kMaxVocabularySize || ids == 0 || classes < 2 || count == 0 || shards == 0) {
    std::cerr << "make_id_shards: need 0 < ROWS <= 2^24, IDS > 0, CLASSES >= 2, COUNT > 0, SHARDS > 0\n";
    return 2;
  }
  try {
    std::filesystem::create_directories(dir);
    for (std::size_t shard = 0; shard < shards; ++shard) {
      pstrain::data::write_shard(dir / pstrain::data::train_shard_file_name(shard),
                                 draw(rows, ids, classes, count, engine));
    }
    pstrain::data::write_shard(dir / pstrain::data::kTestShardFileName, draw(rows, ids, classes, count, engine));
  } catch (const std::exception& error) {
    std::cerr << "make_id_shards: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
