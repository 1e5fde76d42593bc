// The INI configuration (--config FILE, and the config.ini saved with every run and checkpoint): the input is the
// file, parsed with pstrain's own flag declarations and then validated as pstrain does before a run.
#include "config/train_config.h"
#include "core/options.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pstrain;
  const auto input = fuzz::scratch() / "config.ini";
  fuzz::write_file(input, {reinterpret_cast<const char*>(data), size});
  static const auto description = config::train_options();
  const std::string path = input.string();
  const char* argv[] = {"pstrain", "--config", path.c_str(), nullptr};
  const char* environment[] = {nullptr};
  fuzz::expect_clean([&] {
    const LayeredOptions options = parse_layered_options(description, 3, argv, environment);
    if (!options.help_requested && !options.version_requested) config::resolve_train_config(options.values);
  });
  return 0;
}
