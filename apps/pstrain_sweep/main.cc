// pstrain-sweep: hyperparameter sweeps over pstrain. Thin main: everything lives in lib/sweep/cli.cc.
#include <iostream>

#include "core/error.h"
#include "sweep/cli.h"

int main(int argc, char** argv) {
  try {
    return pstrain::sweep::run_cli(argc, argv, std::cout);
  } catch (const pstrain::Error& error) {
    std::cerr << "pstrain-sweep: error: " << error.what() << std::endl;
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    std::cerr << "pstrain-sweep: internal error: " << error.what() << std::endl;
    return static_cast<int>(pstrain::ExitCode::kInternal);
  }
}
