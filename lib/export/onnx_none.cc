// The export in a build without Debian's libonnx-dev (lib/export/CMakeLists.txt): every call says so.
#include "core/error.h"
#include "export/onnx_export.h"

namespace pstrain::exporting {

namespace {

[[noreturn]] void built_without() {
  throw Error(ExitCode::kUsage,
              "this pstrain was built without ONNX (install libonnx-dev and rebuild) and cannot export models");
}

}  // namespace

bool built_with_onnx() {
  return false;
}

std::string onnx_model_bytes(const inference::SavedModel&) {
  built_without();
}

std::filesystem::path external_data_path(const std::filesystem::path& target) {
  return target.string() + ".data";
}

ExportSummary write_onnx_model(const inference::SavedModel&, const std::filesystem::path&, const ExportOptions&) {
  built_without();
}

}  // namespace pstrain::exporting
