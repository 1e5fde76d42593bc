#pragma once
// The opaque-backend fault (test_hooks.h): the CPU backend presented as if its memory were a device's
// (host_accessible() false). Everything computes exactly as on the CPU backend, but callers must go through copies
// and staging buffers, so the code paths of GPU trainers (host mirrors, all-reduce in host memory, parameter
// uploads) run, and are compared bit for bit with the CPU paths, on machines without a GPU.
#include <memory>

#include "compute/backend.h"

namespace pstrain::faults {

std::unique_ptr<compute::Backend> make_opaque_cpu_backend();

}  // namespace pstrain::faults
