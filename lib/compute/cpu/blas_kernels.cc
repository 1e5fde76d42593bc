#include "compute/cpu/blas_kernels.h"

#include <cblas.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "compute/cpu/onednn_convolution.h"
#include "compute/cpu/onednn_gemm.h"
#include "core/error.h"

namespace pstrain::compute {
namespace {

// Set, beside OPENBLAS_CORETYPE, by the re-execution: what the library had chosen on its own, for the log. Not
// PSTRAIN_*: those are flags, and an unknown one is an error.
constexpr const char* kLibraryChoiceVariable = "_PSTRAIN_BLAS_LIBRARY_CHOICE";

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool cpu_has_avx512() {
  // libgcc's checks include the operating system's support for the AVX-512 register state (XGETBV).
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

}  // namespace

std::string better_blas_coretype(const std::string& chosen, bool avx512) {
  if (!avx512) return "";
  // OpenBLAS's AVX-512 families (0.3.21 knows SkylakeX and Cooperlake; later releases add SapphireRapids).
  for (const char* wide : {"skylakex", "cooperlake", "sapphirerapids"}) {
    if (lower(chosen) == wide) return "";
  }
  // SkylakeX's sgemm kernels are the ones Cooperlake also uses; they need only F/BW/DQ/VL.
  return "SkylakeX";
}

void use_best_blas_kernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  const std::string chosen = openblas_get_corename();
  const std::string better = better_blas_coretype(chosen, cpu_has_avx512());
  if (!better.empty()) restart_with_blas_coretype(argv, better, chosen);
}

void restart_with_blas_coretype(char** argv, const std::string& coretype, const std::string& library_choice) {
  ::setenv("OPENBLAS_CORETYPE", coretype.c_str(), 1);
  ::setenv(kLibraryChoiceVariable, library_choice.c_str(), 1);
  ::execv("/proc/self/exe", argv);
  // Still here: the exec failed (no /proc, say). The library keeps its own choice, which works, only slower.
  const int exec_errno = errno;
  ::unsetenv("OPENBLAS_CORETYPE");
  ::unsetenv(kLibraryChoiceVariable);
  std::cerr << "pstrain: warning: could not restart with OPENBLAS_CORETYPE=" << coretype << " ("
            << std::strerror(exec_errno) << "); running OpenBLAS's " << library_choice << " kernels\n";
}

int share_blas_threads(int threads) {
  bool user_set = false;
  for (const char* variable : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}) {
    user_set = user_set || std::getenv(variable) != nullptr;
  }
  if (!user_set) openblas_set_num_threads(std::max(1, threads));
  // oneDNN's convolutions run on OpenMP, which reads OMP_NUM_THREADS itself; otherwise as many as OpenBLAS.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) set_onednn_threads(openblas_get_num_threads());
  return openblas_get_num_threads();
}

std::string blas_kernel_family() {
  return openblas_get_corename();
}

std::string blas_kernels_description() {
  std::string description = openblas_get_config();
  description += "; kernels: ";
  description += openblas_get_corename();
  description += cat(", ", openblas_get_num_threads(), " thread(s)");
  if (const char* library_choice = std::getenv(kLibraryChoiceVariable)) {
    description += " (selected by pstrain for this CPU; OpenBLAS's own detection chose ";
    description += library_choice;
    description += ")";
  } else if (std::getenv("OPENBLAS_CORETYPE") != nullptr) {
    description += " (OPENBLAS_CORETYPE set by the user)";
  }
  if (const std::string onednn = onednn_sgemm_description(); !onednn.empty()) description += "; " + onednn;
  return description;
}

}  // namespace pstrain::compute
