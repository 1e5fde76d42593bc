#pragma once
// `pstrain export --onnx FILE PASS_FOLDER` (apps/pstrain/main.cc dispatches on the first argument). argv[0] is the
// subcommand's name; returns the exit code, failures are thrown as pstrain::Error.
namespace pstrain::exporting {

int run_export(int argc, char** argv);

}  // namespace pstrain::exporting
