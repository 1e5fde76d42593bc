// pstrain-elastic: the elastic driver. Thin main: everything lives in lib/launch (driver.h: the loop; policy.h:
// the decisions). Exit codes: lib/launch/exit_codes.h.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "core/log.h"
#include "launch/driver.h"

namespace {

std::optional<std::string> environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

std::filesystem::path own_path(const char* argv0) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::absolute(argv0) : self;
}

}  // namespace

int main(int argc, char** argv) {
  using pstrain::launch::DriverExit;
  pstrain::Logger::instance().set_identity("pstrain-elastic");
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    std::cout << pstrain::launch::driver_usage();
    return 0;
  }
  try {
    pstrain::launch::Driver driver(pstrain::launch::parse_driver_options(args, environment, own_path(argv[0])));
    return driver.run();
  } catch (const pstrain::launch::DriverError& error) {
    std::cerr << "pstrain-elastic: error: " << error.what() << std::endl;
    if (error.code() == DriverExit::kUsage) std::cerr << pstrain::launch::driver_usage();
    return static_cast<int>(error.code());
  } catch (const pstrain::Error& error) {
    std::cerr << "pstrain-elastic: error: " << error.what() << std::endl;
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    std::cerr << "pstrain-elastic: internal error: " << error.what() << std::endl;
    return static_cast<int>(DriverExit::kInternal);
  }
}
