#pragma once
// `pstrain evaluate` and `pstrain predict` (apps/pstrain/main.cc dispatches on the first argument). argv[0] is the
// subcommand's name. Both return the process's exit code; failures are thrown as pstrain::Error.
namespace pstrain::inference {

int run_evaluate(int argc, char** argv);
int run_predict(int argc, char** argv);

}  // namespace pstrain::inference
