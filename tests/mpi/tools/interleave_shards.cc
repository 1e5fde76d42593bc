// Test tool: builds the single-trainer data set that is equivalent to a T-trainer sync run.
//
// With T trainers and batch b, sync step i averages trainer t's samples [i*b, (i+1)*b) over all t. This writes
// one train shard whose batch i of size T*b is exactly those samples (trainer by trainer), so a local run with
// batch T*b and --shuffle false sees the same samples at every step as the distributed run.
//
// usage: interleave_shards DATA_DIR TRAINERS BATCH OUTPUT_DIR
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "data/shard.h"

namespace fs = std::filesystem;
using namespace pstrain;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: interleave_shards DATA_DIR TRAINERS BATCH OUTPUT_DIR\n";
    return 2;
  }
  try {
    const fs::path input = argv[1];
    const std::size_t trainers = std::strtoul(argv[2], nullptr, 10);
    const std::size_t batch = std::strtoul(argv[3], nullptr, 10);
    const fs::path output = argv[4];
    const auto shards = data::list_train_shards(input);
    std::vector<data::Samples> per_trainer(trainers);
    for (std::size_t index = 0; index < shards.size(); ++index) {
      data::Samples shard = data::read_shard(shards[index]);
      data::Samples& mine = per_trainer[index % trainers];
      mine.meta = shard.meta;
      mine.features.insert(mine.features.end(), shard.features.begin(), shard.features.end());
      mine.labels.insert(mine.labels.end(), shard.labels.begin(), shard.labels.end());
    }
    const std::size_t width = per_trainer[0].meta.sample_size();
    const std::size_t count = per_trainer[0].labels.size();
    data::Samples combined;
    combined.meta = per_trainer[0].meta;
    for (std::size_t start = 0; start < count; start += batch) {
      for (const data::Samples& mine : per_trainer) {
        if (mine.labels.size() != count || count % batch != 0) {
          std::cerr << "interleave_shards: every trainer needs the same sample count, a multiple of the batch\n";
          return 2;
        }
        combined.features.insert(combined.features.end(), mine.features.begin() + start * width,
                                 mine.features.begin() + (start + batch) * width);
        combined.labels.insert(combined.labels.end(), mine.labels.begin() + start, mine.labels.begin() + start + batch);
      }
    }
    combined.meta.sample_count = combined.labels.size();
    fs::create_directories(output);
    data::write_shard(output / "train-00000.h5", combined);
    fs::copy_file(data::test_shard_path(input), output / "test.h5", fs::copy_options::overwrite_existing);
    for (const char* beside : {"valid.h5", "vocab.txt"}) {  // token data: the validation split and vocabulary
      if (fs::exists(input / beside))
        fs::copy_file(input / beside, output / beside, fs::copy_options::overwrite_existing);
    }
    std::cout << "wrote " << combined.labels.size() << " samples in batches of " << trainers * batch << "\n";
  } catch (const std::exception& error) {
    std::cerr << "interleave_shards: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
