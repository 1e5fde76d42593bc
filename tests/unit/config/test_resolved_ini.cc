#include "config/resolved_ini.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/options.h"

namespace pstrain::config {
namespace {

LayeredOptions parse(std::vector<std::string> extra) {
  std::vector<std::string> args = {"pstrain"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for (const auto& arg : args) argv.push_back(arg.c_str());
  const char* environment[] = {nullptr};
  return parse_layered_options(train_options(), static_cast<int>(argv.size()), argv.data(), environment);
}

// A run's config.ini given back with --config (as "To continue that run" advises) resolves to the same run, also
// where a default depends on another flag: the click presets' optimizer, learning rate, batch and widths, nplm's
// width, GEO's optimizer. Read back as given values, the parsed defaults ("optimizer = momentum", "batch-size = 64",
// "embedding-dim = 30") would train another model.
TEST(ResolvedIni, GivenBackWithConfigResolvesToTheSameRun) {
  const std::vector<std::vector<std::string>> runs = {{"--model", "deepfm"},
                                                      {"--model", "dlrm"},
                                                      {"--model", "nplm"},
                                                      {"--mode", "geo"},
                                                      {"--model", "deepfm", "--lr", "0.3", "--batch-size", "32",
                                                       "--optimizer", "adam", "--hidden", "none"},
                                                      {"--model", "dlrm", "--table-keys", "exact", "--admit-after", "3",
                                                       "--row-ttl-steps", "100"}};
  const std::filesystem::path file = std::filesystem::path(testing::TempDir()) / "resolved_ini_test.ini";
  for (std::vector<std::string> flags : runs) {
    flags.insert(flags.end(), {"--data-dir", "d", "--output-dir", "o"});
    const LayeredOptions first = parse(flags);
    const TrainConfig run = resolve_train_config(first.values);
    std::ofstream(file) << resolved_ini(first.values, run);
    const TrainConfig again = resolve_train_config(parse({"--config", file.string()}).values);
    SCOPED_TRACE(flags[1]);
    EXPECT_EQ(again.model, run.model);
    EXPECT_EQ(again.mode, run.mode);
    EXPECT_EQ(again.optimizer.kind, run.optimizer.kind);
    EXPECT_EQ(again.optimizer.learning_rate, run.optimizer.learning_rate);
    EXPECT_EQ(again.batch_size, run.batch_size);
    EXPECT_EQ(again.embedding_dim, run.embedding_dim);
    EXPECT_EQ(again.hidden, run.hidden);
    EXPECT_EQ(again.table_keys.exact, run.table_keys.exact);
    EXPECT_EQ(again.table_keys.admit_after, run.table_keys.admit_after);
    EXPECT_EQ(again.table_keys.ttl_steps, run.table_keys.ttl_steps);
  }
  std::filesystem::remove(file);
}

// Values the user gave are written as given; only parsed defaults are replaced.
TEST(ResolvedIni, KeepsGivenValuesAndPlainDefaults) {
  const LayeredOptions options = parse({"--data-dir", "d", "--output-dir", "o", "--lr", "0.3"});
  const std::string ini = resolved_ini(options.values, resolve_train_config(options.values));
  EXPECT_NE(ini.find("lr = 0.3\n"), std::string::npos) << ini;
  EXPECT_NE(ini.find("optimizer = momentum\n"), std::string::npos) << ini;  // the mlp's default, as parsed
  EXPECT_NE(ini.find("hidden = 256,128\n"), std::string::npos) << ini;
  const LayeredOptions deepfm = parse({"--data-dir", "d", "--output-dir", "o", "--model", "deepfm"});
  EXPECT_NE(resolved_ini(deepfm.values, resolve_train_config(deepfm.values)).find("lr = 0.0125\n"), std::string::npos);
}

}  // namespace
}  // namespace pstrain::config
