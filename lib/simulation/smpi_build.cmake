# The SimGrid dry-run build (the `smpi` preset: CMAKE_CXX_COMPILER=smpicxx, PSTRAIN_SMPI=ON), included by the top
# CMakeLists.txt instead of the rest of it: only the libraries the simulated ranks run (core, comm, optim,
# exchange, ps and the model plans it reads (nn), compute without oneDNN or CUDA, allreduce, the modes), lib/simulation and
# pstrain-dryrun. The same sources as the real build; what SMPI changes is in lib/simulation alone (README.md there).
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(ZLIB REQUIRED)
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
# smpicxx supplies SimGrid's mpi.h and links libsimgrid: the MPI target the libraries name is empty here.
add_library(MPI::MPI_CXX INTERFACE IMPORTED)
set(PSTRAIN_HAVE_ONEDNN OFF)
set(PSTRAIN_HAVE_CUDA OFF)
set(PSTRAIN_HAVE_NCCL OFF)
# smpicxx links the program as a shared object that smpimain loads once per simulated host process.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
# First on the include path: lib/simulation/overrides/core/*.h shadow lib/core's clock and poll pause.
include_directories(BEFORE ${PROJECT_SOURCE_DIR}/lib/simulation/overrides)
# smpi_helpers.h (included by smpicxx in every file) would otherwise turn `std::free(p)` into `std::smpi_shared_free`.
add_compile_definitions(SMPI_NO_OVERRIDE_MALLOC)
# SimGrid 3.32 aborts when shared and exclusive window locks mix: every lock is taken shared (the header says why).
add_compile_options(-include ${PROJECT_SOURCE_DIR}/lib/simulation/overrides/smpi_shared_locks.h)
foreach(layer core comm optim exchange compute nn ps allreduce modes simulation)
  add_subdirectory(lib/${layer})
endforeach()
add_subdirectory(apps/pstrain_dryrun)
