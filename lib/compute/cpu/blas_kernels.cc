#include "compute/cpu/blas_kernels.h"

#include <cblas.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "compute/cpu/onednn_convolution.h"
#include "compute/cpu/onednn_gemm.h"
#include "core/error.h"

namespace pstrain::compute {
namespace {

// Set, beside OPENBLAS_CORETYPE, by the re-execution: what the library had chosen on its own, for the log. Not
// PSTRAIN_*: those are flags, and an unknown one is an error.
constexpr const char* kLibraryChoiceVariable = "_PSTRAIN_BLAS_LIBRARY_CHOICE";

// Rounds an idle libgomp thread spins before it sleeps (blas_kernels.h says why it is short).
constexpr const char* kShortOpenMpSpin = "1000";

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

std::string openmp_spin_count(const char* wait_policy, const char* spin_count) {
  if (wait_policy != nullptr || spin_count != nullptr) return "";
  return kShortOpenMpSpin;
}

namespace {

using Settings = std::vector<std::pair<std::string, std::string>>;

// The program's own file, so that the restarted process keeps its name: exec names a process after the file it
// runs (/proc/PID/comm), and `ps`, `pkill pstrain` and the recovery tests find ranks by that name; through the
// /proc/self/exe link it would be called "exe". The link itself where the file is gone (replaced by a rebuild).
std::string own_program() {
  std::error_code error;
  const std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error || !std::filesystem::is_regular_file(path, error)) return "/proc/self/exe";
  return path.string();
}

// Sets `settings` and replaces this process by itself. Returns only when the exec failed, after a warning, with
// the environment as it was.
void restart_with(char** argv, const Settings& settings, const std::string& library_choice) {
  for (const auto& [name, value] : settings) ::setenv(name.c_str(), value.c_str(), 1);
  if (!library_choice.empty()) ::setenv(kLibraryChoiceVariable, library_choice.c_str(), 1);
  ::execv(own_program().c_str(), argv);
  // Still here: the exec failed (no /proc, say). The libraries keep their own choices, which work, only slower.
  const int exec_errno = errno;
  std::string what;
  for (const auto& [name, value] : settings) {
    what += (what.empty() ? "" : " ") + name + "=" + value;
    ::unsetenv(name.c_str());
  }
  ::unsetenv(kLibraryChoiceVariable);
  std::cerr << "pstrain: warning: could not restart with " << what << " (" << std::strerror(exec_errno)
            << "); running with the libraries' own choices\n";
}

}  // namespace

void use_best_cpu_libraries(char** argv) {
  Settings settings;
  std::string library_choice;
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr) {
    library_choice = openblas_get_corename();
    const std::string better = better_blas_coretype(library_choice, cpu_has_avx512());
    if (better.empty()) {
      library_choice.clear();
    } else {
      settings.emplace_back("OPENBLAS_CORETYPE", better);
    }
  }
  const std::string spin = openmp_spin_count(std::getenv("OMP_WAIT_POLICY"), std::getenv("GOMP_SPINCOUNT"));
  if (!spin.empty()) settings.emplace_back("GOMP_SPINCOUNT", spin);
  if (!settings.empty()) restart_with(argv, settings, library_choice);
}

void restart_with_blas_coretype(char** argv, const std::string& coretype, const std::string& library_choice) {
  restart_with(argv, {{"OPENBLAS_CORETYPE", coretype}}, library_choice);
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
  if (const char* policy = std::getenv("OMP_WAIT_POLICY")) {
    description += cat("; idle OpenMP threads: OMP_WAIT_POLICY=", policy);
  } else if (const char* spin = std::getenv("GOMP_SPINCOUNT")) {
    description += cat("; idle OpenMP threads spin ", spin, " rounds, then sleep");
  }
  return description;
}

}  // namespace pstrain::compute
