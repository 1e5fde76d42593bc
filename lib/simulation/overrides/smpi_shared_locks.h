#pragma once
// SimGrid dry-run build only (lib/simulation/README.md), included into every file by smpi_build.cmake: every
// MPI_Win_lock is taken as MPI_LOCK_SHARED. SimGrid 3.32's passive-target locks keep one mode word per window:
// an unlock resets it to 0 while other shared holders remain, so a later exclusive lock and a shared unlock
// release a mutex another actor owns, and the simulation aborts ("Cannot release that mutex: you're not the
// owner"; 16 ranks in async, an async server's exclusive lock on its params beside trainers' shared pulls). The
// dry-run's values are never read, so the exclusion only shaped timing: a trainer's pull may now overlap the
// server's update of the same slice in simulated time (an optimistic error of at most one update per pull).
#include <mpi.h>

#define MPI_Win_lock(lock_type, rank, assertion, win) \
  MPI_Win_lock(((void)(lock_type), MPI_LOCK_SHARED), (rank), (assertion), (win))
