#include "core/error.h"

namespace pstrain {

void fail_invariant(const char* expression, const std::string& detail, const char* file, int line) {
  throw Error(ExitCode::kInternal,
              cat("internal error: ", expression, " failed at ", file, ":", line, detail.empty() ? "" : ": ", detail));
}

}  // namespace pstrain
