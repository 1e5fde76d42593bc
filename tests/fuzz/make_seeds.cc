// Writes the HDF5 seeds of the checkpoint fuzz targets with pstrain's own writers, for the model of
// checkpoint_model.h: make_seeds OUT_DIR writes OUT_DIR/fuzz_checkpoint/{momentum,sgd-...} and
// OUT_DIR/fuzz_pass_folder/pass-00000. tests/fuzz/make_corpora.sh calls it; the results are committed.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "checkpoint/checkpoint.h"
#include "checkpoint/pass_folder.h"
#include "checkpoint_model.h"
#include "fuzz_util.h"

namespace fs = std::filesystem;
using namespace pstrain;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<float> ramp(float start) {
  std::vector<float> values(fuzz::kFuzzModelSize);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = start + 0.01f * static_cast<float>(i);
  return values;
}

// One checkpoint as a fuzz input: control byte, MANIFEST, model.h5, training.h5.
void checkpoint_seed(const fs::path& work, const fs::path& out, const std::string& optimizer,
                     std::vector<std::pair<std::string, std::vector<float>>> state, bool real_manifest) {
  checkpoint::Checkpoint ckpt;
  ckpt.model.parameters = ramp(0.5f);
  ckpt.model.optimizer = optimizer;
  ckpt.model.optimizer_steps = 7;
  ckpt.model.optimizer_state = std::move(state);
  ckpt.training = {0, 1, 1, 42, {{1, 0, 0, 1, 0}, {0, 0, 1, 0, 0, 0, 1}}};
  fs::remove_all(work);
  const fs::path folder = checkpoint::write_checkpoint(work, ckpt, fuzz::fuzz_model_parameters(), "passes = 1\n", {});
  std::string bytes(1, real_manifest ? '\1' : '\0');
  bytes += slurp(folder / "MANIFEST");
  bytes += fuzz::kFileSeparator;
  bytes += slurp(folder / "model.h5");
  bytes += fuzz::kFileSeparator;
  bytes += slurp(folder / "training.h5");
  fuzz::write_file(out, bytes);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_seeds OUT_DIR\n";
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path work = fuzz::scratch() / "work";
  fs::create_directories(out / "fuzz_checkpoint");
  fs::create_directories(out / "fuzz_pass_folder");
  checkpoint_seed(work, out / "fuzz_checkpoint" / "momentum", "momentum", {{"velocity", ramp(-0.1f)}}, true);
  checkpoint_seed(work, out / "fuzz_checkpoint" / "momentum-fuzzed-manifest", "momentum", {{"velocity", ramp(0.2f)}},
                  false);
  checkpoint_seed(work, out / "fuzz_checkpoint" / "adam", "adam", {{"m", ramp(0.f)}, {"v", ramp(1.f)}}, true);
  fs::remove_all(work);
  fs::create_directories(work);
  checkpoint::write_pass_folder(work, 0, fuzz::fuzz_model_parameters(), ramp(0.25f));
  fs::copy_file(work / "pass-00000" / "parameters.h5", out / "fuzz_pass_folder" / "pass-00000",
                fs::copy_options::overwrite_existing);
  return 0;
}
