#pragma once
// Which BLAS kernels this process runs, and getting the machine's best ones without the user setting anything.
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels from the CPU model when the library loads. A
// release older than the CPU does not know it and falls back to a narrower family: Debian 12's 0.3.21 runs its
// AVX2 Haswell kernels on AVX-512 AMD Zen 5 cores (~104 GFLOP/s single-thread sgemm here, against ~180 with the
// SkylakeX kernels; ../shared/docs/PLATFORM.md, "CPU kernels"). The only supported way to choose is the
// OPENBLAS_CORETYPE variable, read once at load time, so the choice must be made before the library loads:
// use_best_cpu_libraries() re-executes the program with the variable set. exec keeps the PID, the arguments and
// the rest of the environment, so mpirun, srun and container runtimes see the same process.
//
// The same restart shortens how long OpenMP's idle threads spin (GOMP_SPINCOUNT, also read only at load time):
// pstrain's products alternate between oneDNN, on OpenMP threads, and OpenBLAS, on its own threads, and libgomp's
// default spin of ~300,000 rounds after every parallel region kept the cores busy while OpenBLAS needed them.
// Measured 2026-11-26, the MLP on one rank: 2 cores (here) 26-47k samples/s with 2 threads against 73-80k with
// one and 88-109k with a spin of 1000; the GPU machine's 16 cores 1.9k with 16 threads, 109k with 8, 74k with
// OMP_WAIT_POLICY=passive (benchmarks/README.md, "CPU threads").
#include <string>
#include <utility>
#include <vector>

namespace pstrain::compute {

// The OpenBLAS core type to ask for on this CPU, or "" when the library's own choice is already as wide as the
// CPU allows. `chosen` is the library's choice (openblas_get_corename()); `avx512` says whether the CPU and the
// operating system support the AVX-512 F/BW/DQ/VL subset that OpenBLAS's SkylakeX kernels use.
std::string better_blas_coretype(const std::string& chosen, bool avx512);

// The GOMP_SPINCOUNT to set, or "" when the user chose how OpenMP's threads wait (OMP_WAIT_POLICY or
// GOMP_SPINCOUNT set, passed here as null when unset): their choice wins.
std::string openmp_spin_count(const char* wait_policy, const char* spin_count);

// Call first thing in main(), before MPI_Init and before any thread starts. Replaces the process image by itself
// with OPENBLAS_CORETYPE set when better_blas_coretype() names a core type and GOMP_SPINCOUNT set when
// openmp_spin_count() names one; returns normally otherwise (also after the restart, where both are set), and
// when the exec fails (the libraries' own choices still work, only slower).
void use_best_cpu_libraries(char** argv);

// The mechanism: re-executes this program with OPENBLAS_CORETYPE=coretype, remembering `library_choice` for the
// log. Returns only when the exec failed, after a warning, with the environment as it was.
void restart_with_blas_coretype(char** argv, const std::string& coretype, const std::string& library_choice);

// Runs `threads` BLAS (and oneDNN) threads in this rank (comm::cpu_threads_for_this_rank says how many the
// allocation gives it), unless the user set OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS: OpenBLAS's
// default of one thread per core in every rank oversubscribes a node that runs several ranks, and its spinning
// threads then slow every rank down. Returns the thread count in effect.
int share_blas_threads(int threads);

// The kernel family OpenBLAS runs in this process ("SkylakeX", "Haswell", ...).
std::string blas_kernel_family();

// For the log: "OpenBLAS 0.3.21, SkylakeX kernels (selected by pstrain: the library chose Haswell)".
std::string blas_kernels_description();

}  // namespace pstrain::compute
