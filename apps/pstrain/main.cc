// pstrain: the distributed trainer. Thin main: everything lives in lib/train/job.cc.
#include <iostream>

#include "core/error.h"
#include "train/job.h"

int main(int argc, char** argv) {
  try {
    return pstrain::train::run_job(argc, argv);
  } catch (const pstrain::Error& error) {
    std::cerr << "pstrain: error: " << error.what() << std::endl;
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    std::cerr << "pstrain: internal error: " << error.what() << std::endl;
    return static_cast<int>(pstrain::ExitCode::kInternal);
  }
}
