// pstrain: the distributed trainer. Thin main: the command line is program.cc's, the job lib/job/job.cc's.
#include "pstrain/program.h"

int main(int argc, char** argv) {
  pstrain::prepare_process(argv);  // before anything else: it may re-execute this program
  return pstrain::run_program(argc, argv, pstrain::run_common::RunHooks::none());
}
