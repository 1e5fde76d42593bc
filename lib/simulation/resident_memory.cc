#include "simulation/resident_memory.h"

#include <fstream>
#include <string>

namespace pstrain::simulation {

std::size_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  std::size_t kibibytes = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> kibibytes;
      return kibibytes * 1024;
    }
    status.ignore(1 << 12, '\n');
  }
  return 0;
}

}  // namespace pstrain::simulation
