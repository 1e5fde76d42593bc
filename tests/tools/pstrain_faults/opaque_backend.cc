#include "opaque_backend.h"

#include "compute/cpu/cpu_backend.h"

namespace pstrain::faults {

namespace {

// The CPU backend in every operation; only host_accessible() differs, so that callers take the paths of a
// backend whose memory they cannot touch (a GPU's).
class OpaqueCpuBackend final : public compute::CpuBackend {
 public:
  std::string name() const override { return "cpu-opaque (testing)"; }
  bool host_accessible() const override { return false; }
};

}  // namespace

std::unique_ptr<compute::Backend> make_opaque_cpu_backend() {
  return std::make_unique<OpaqueCpuBackend>();
}

}  // namespace pstrain::faults
