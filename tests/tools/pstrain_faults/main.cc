// pstrain-faults: pstrain (apps/pstrain/program.h) with the faults PSTRAIN_TEST_HOOKS asks for (test_hooks.h)
// injected as run hooks. The test suite's binary: built with the tests into build/bin, never installed.
#include <iostream>

#include "core/error.h"
#include "fault_hooks.h"
#include "pstrain/program.h"

int main(int argc, char** argv) {
  pstrain::prepare_process(argv);  // before anything else: it may re-execute this program
  try {
    pstrain::faults::FaultHooks hooks(pstrain::faults::take_test_hooks());
    return pstrain::run_program(argc, argv, hooks);
  } catch (const pstrain::Error& error) {  // a malformed PSTRAIN_TEST_HOOKS: every rank alike, before MPI starts
    std::cerr << "pstrain-faults: error: " << error.what() << std::endl;
    return static_cast<int>(error.code());
  }
}
