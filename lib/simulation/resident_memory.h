#pragma once
// This process's resident memory now (VmRSS of /proc/self/status), in bytes; 0 where it cannot be read.
#include <cstddef>

namespace pstrain::simulation {

std::size_t resident_bytes();

}  // namespace pstrain::simulation
