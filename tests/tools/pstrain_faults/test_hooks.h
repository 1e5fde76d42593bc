#pragma once
// The test suite's fault injection, which no program a user runs honours: only pstrain-faults (main.cc, built with
// the tests into build/bin, never installed) reads it. A test sets PSTRAIN_TEST_HOOKS in the environment of a run,
// for example
//   PSTRAIN_TEST_HOOKS=step-delay-ms=50,slow-trainer=0 mpirun -np 3 build/bin/pstrain-faults ...
// and every rank reads it once, before the job starts, and passes the faults to the job as run hooks
// (fault_hooks.h over run_common/run_hooks.h). pstrain itself refuses to run with the variable set, so that a test can
// never pass against a binary that silently ignored its fault.
#include <cstdint>
#include <string>
#include <string_view>

namespace pstrain::faults {

struct TestHooks {
  int checkpoint_delay_ms = 0;             // pause inside every checkpoint write (to kill a rank during one)
  int step_delay_ms = 0;                   // pause after every step (to stop a run at a chosen time)
  int slow_trainer = -1;                   // the trainer the step delay, slow factor and leave delay apply to
  double slow_factor = 1;                  // slow_trainer's steps (compute and exchange) take this many times as long
  int leave_delay_ms = 0;                  // slow_trainer pauses this long after training, before MPI_Finalize
  std::int64_t perturb_replica_step = -1;  // all-reduce: the last trainer nudges its copy by one ulp after this step
  bool opaque_backend = false;             // trainers compute on the CPU backend behind copies, as on a GPU
  int ranks_per_node = 0;                  // > 0: push groups (comm/push_groups.h) see world ranks [k n, k n + n)
                                           // as node k, so one machine can stand in for several nodes
  std::string fill_disk;                   // after trainer 0's first step, this file fills its file system (a disk
                                           // that fills during a run, after the start's disk check passed)

  // Whether the step delay applies to trainer `trainer` (every trainer when none is named).
  bool delays(int trainer) const { return step_delay_ms > 0 && (slow_trainer < 0 || slow_trainer == trainer); }
};

// PSTRAIN_TEST_HOOKS parsed (all defaults when it is unset), then removed from this process's environment: the
// job refuses to start while it is set (job/job_start.cc). Throws Error(kUsage) naming a malformed entry.
TestHooks take_test_hooks();

// The parser behind take_test_hooks(), for its unit tests: "name=value,name=value".
TestHooks parse_test_hooks(std::string_view text);

}  // namespace pstrain::faults
