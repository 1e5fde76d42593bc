#include "core/shared_library.h"

#include <dlfcn.h>

#include <utility>

#include "core/error.h"

namespace pstrain {

namespace {

std::string loader_error() {
  const char* reason = dlerror();
  return reason != nullptr ? reason : "no reason given";
}

}  // namespace

// RTLD_NODELETE: libraries such as the CUDA ones register exit handlers of their own; closing the handle must never
// unmap code that such a handler would run at exit.
SharedLibrary::SharedLibrary(std::string soname, const std::string& remedy)
    : soname_(std::move(soname)), handle_(dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)) {
  if (handle_ == nullptr) {
    throw Error(ExitCode::kMissingDependency, cat("cannot load ", soname_, " (", loader_error(), "): ", remedy));
  }
}

SharedLibrary::~SharedLibrary() {
  dlclose(handle_);
}

void* SharedLibrary::symbol(const char* name) const {
  dlerror();  // clear an earlier error, so that the one read below is this lookup's
  void* address = dlsym(handle_, name);
  if (address == nullptr) {
    throw Error(ExitCode::kMissingDependency, cat(soname_, " has no function ", name, " (", loader_error(),
                                                  "): it is older than the version pstrain was built against"));
  }
  return address;
}

}  // namespace pstrain
