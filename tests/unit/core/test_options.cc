#include "core/options.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/error.h"

namespace po = boost::program_options;

namespace pstrain {
namespace {

po::options_description sample_options() {
  po::options_description description("test");
  description.add_options()("batch-size", po::value<int>()->default_value(64),
                            "")("lr", po::value<double>()->default_value(0.1),
                                "")("mode", po::value<std::string>()->default_value("sync"), "");
  return description;
}

struct Args {
  std::vector<std::string> storage;
  std::vector<const char*> pointers;
  explicit Args(std::vector<std::string> args) : storage(std::move(args)) {
    for (const auto& arg : storage) pointers.push_back(arg.c_str());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(storage.size()); }
  const char* const* argv() const { return pointers.data(); }
};

class ConfigFile {
 public:
  // Named by process and count: CTest runs the tests of this file side by side (-j 2), each in a process of its
  // own, and a name shared between them let one test read or remove another's file.
  explicit ConfigFile(const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("pstrain-options-" + std::to_string(::getpid()) + "-" + std::to_string(next_++) + ".ini")) {
    std::ofstream(path_) << text;
  }
  ~ConfigFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int next_ = 0;
  std::filesystem::path path_;
};

TEST(LayeredOptions, CommandLineBeatsEnvironmentBeatsFile) {
  const ConfigFile file("batch-size = 8\nlr = 0.5\nmode = async\n");
  const Args args({"prog", "--config", file.path(), "--batch-size", "32"});
  const Args environment({"PSTRAIN_BATCH_SIZE=16", "PSTRAIN_LR=0.25", "HOME=/root"});
  const auto result = parse_layered_options(sample_options(), args.argc(), args.argv(), environment.argv());
  EXPECT_EQ(result.values["batch-size"].as<int>(), 32);         // command line
  EXPECT_EQ(result.values["lr"].as<double>(), 0.25);            // environment
  EXPECT_EQ(result.values["mode"].as<std::string>(), "async");  // file
}

TEST(LayeredOptions, DefaultsApplyWhenNothingIsSet) {
  const Args args({"prog"});
  const Args environment({});
  const auto result = parse_layered_options(sample_options(), args.argc(), args.argv(), environment.argv());
  EXPECT_EQ(result.values["batch-size"].as<int>(), 64);
}

void expect_usage_error(const Args& args, const Args& environment, const std::string& fragment) {
  try {
    parse_layered_options(sample_options(), args.argc(), args.argv(), environment.argv());
    FAIL() << "expected an error mentioning " << fragment;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(LayeredOptions, UnknownFlagIsAnError) {
  expect_usage_error(Args({"prog", "--bach-size", "3"}), Args({}), "bach-size");
}

TEST(LayeredOptions, UnknownEnvironmentVariableIsAnError) {
  expect_usage_error(Args({"prog"}), Args({"PSTRAIN_BACH_SIZE=3"}), "PSTRAIN_BACH_SIZE");
}

TEST(LayeredOptions, UnknownKeyInFileIsAnError) {
  const ConfigFile file("bach-size = 8\n");
  expect_usage_error(Args({"prog", "--config", file.path()}), Args({}), "bach-size");
}

TEST(LayeredOptions, MistypedFlagSuggestsTheNearestOne) {
  expect_usage_error(Args({"prog", "--bach-size", "3"}), Args({}), "did you mean --batch-size?");
  expect_usage_error(Args({"prog"}), Args({"PSTRAIN_BACH_SIZE=3"}), "did you mean --batch-size?");
}

TEST(LayeredOptions, FlagFarFromEveryOptionGetsNoSuggestion) {
  try {
    parse_layered_options(sample_options(), 3, Args({"prog", "--wholly-unrelated", "1"}).argv(), Args({}).argv());
    FAIL() << "accepted an unknown flag";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).find("did you mean"), std::string::npos) << error.what();
  }
}

TEST(LayeredOptions, ProjectVariablesThatAreNotFlagsAreIgnored) {
  const Args environment({"PSTRAIN_BIN=/opt/pstrain/bin/pstrain", "PSTRAIN_CACHE_DIR=/tmp/c", "PSTRAIN_SANITIZERS=0",
                          "PSTRAIN_FLAGS=--passes 2"});
  const auto result = parse_layered_options(sample_options(), 1, Args({"prog"}).argv(), environment.argv());
  EXPECT_EQ(result.values["batch-size"].as<int>(), 64);
  EXPECT_TRUE(is_tool_variable("PSTRAIN_CACHE_DIR"));
  EXPECT_FALSE(is_tool_variable("PSTRAIN_BATCH_SIZE"));
}

TEST(LayeredOptions, FileErrorsNameTheFileAndLine) {
  const ConfigFile unknown("# a comment\nlr = 0.5\nbach-size = 8\n");
  expect_usage_error(Args({"prog", "--config", unknown.path()}), Args({}),
                     unknown.path() + ":3: unknown key 'bach-size'; did you mean --batch-size?");
  const ConfigFile bad_value("lr = 0.5\n\nbatch-size = lots\n");
  expect_usage_error(Args({"prog", "--config", bad_value.path()}), Args({}), bad_value.path() + ":3: ");
  const ConfigFile malformed("lr 0.5\n");
  expect_usage_error(Args({"prog", "--config", malformed.path()}), Args({}),
                     malformed.path() + ":1: expected 'flag = value'");
  const ConfigFile no_key("lr = 0.5\n  = 3\n");
  expect_usage_error(Args({"prog", "--config", no_key.path()}), Args({}),
                     no_key.path() + ":2: expected 'flag = value'");
  const ConfigFile twice("lr = 0.5\nlr = 0.25\n");
  expect_usage_error(Args({"prog", "--config", twice.path()}), Args({}), twice.path() + ":2: 'lr' is set twice");
}

TEST(LayeredOptions, BadValueOnTheCommandLineNamesNoFileLine) {
  const ConfigFile file("batch-size = 8\n");
  try {
    parse_layered_options(sample_options(), 5, Args({"prog", "--config", file.path(), "--batch-size", "lots"}).argv(),
                          Args({}).argv());
    FAIL() << "accepted --batch-size lots";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).find(file.path()), std::string::npos) << error.what();
  }
}

TEST(LayeredOptions, NonNumericValueIsAnError) {
  expect_usage_error(Args({"prog", "--batch-size", "lots"}), Args({}), "batch-size");
}

TEST(LayeredOptions, MissingConfigFileIsAnError) {
  expect_usage_error(Args({"prog", "--config", "/nonexistent/pstrain.ini"}), Args({}), "/nonexistent/pstrain.ini");
}

TEST(LayeredOptions, ResolvedIniParsesBackToTheSameValues) {
  const Args args({"prog", "--batch-size", "48", "--mode", "async"});
  const auto first = parse_layered_options(sample_options(), args.argc(), args.argv(), Args({}).argv());
  const ConfigFile file(to_ini(first.values));
  const auto second =
      parse_layered_options(sample_options(), 3, Args({"prog", "--config", file.path()}).argv(), Args({}).argv());
  EXPECT_EQ(second.values["batch-size"].as<int>(), 48);
  EXPECT_EQ(second.values["mode"].as<std::string>(), "async");
}

TEST(EnvironmentNames, MapToFlags) {
  EXPECT_EQ(environment_name_to_option("PSTRAIN_BATCH_SIZE", "PSTRAIN_"), "batch-size");
  EXPECT_EQ(environment_name_to_option("HOME", "PSTRAIN_"), "");
}

// Regression (fuzzing, issue 13): Boost 1.74 fills the %placeholders% of its messages in a loop that never ended
// when the user's text contained the placeholder itself; a config value "%value%x" hung pstrain. A regression
// hangs this test until CTest's timeout fails it.
TEST(LayeredOptions, PlaceholderTextInValuesAndKeysEndsWithAClearError) {
  const Args environment({});
  const ConfigFile value_file("batch-size = %value%x\n");
  const Args value_args({"prog", "--config", value_file.path()});
  try {
    parse_layered_options(sample_options(), value_args.argc(), value_args.argv(), environment.argv());
    FAIL() << "accepted a non-numeric batch size";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("%25value%25x"), std::string::npos) << error.what();
  }
  const ConfigFile key_file("bogus%canonical_option%key = 1\n");
  const Args key_args({"prog", "--config", key_file.path()});
  EXPECT_THROW(parse_layered_options(sample_options(), key_args.argc(), key_args.argv(), environment.argv()), Error);
  const Args command_line({"prog", "--lr", "%value%"});
  EXPECT_THROW(parse_layered_options(sample_options(), command_line.argc(), command_line.argv(), environment.argv()),
               Error);
}

}  // namespace
}  // namespace pstrain
