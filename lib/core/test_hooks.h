#pragma once
// The test suite's fault injection, kept out of the product's options: no flag, no --help line, no config.ini
// entry, no field of TrainConfig. A test sets PSTRAIN_TEST_HOOKS in the environment of a run, for example
//   PSTRAIN_TEST_HOOKS=step-delay-ms=50,slow-trainer=0 mpirun -np 3 pstrain ...
// and every rank reads it once, on first use. Only builds configured with -DPSTRAIN_TEST_HOOKS=ON (the default
// when the tests are built) honour it; any other build refuses a run that sets it, so that a test can never pass
// against a binary that silently ignored its fault.
#include <cstdint>
#include <string_view>

namespace pstrain {

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

  // Whether the step delay applies to trainer `trainer` (every trainer when none is named).
  bool delays(int trainer) const { return step_delay_ms > 0 && (slow_trainer < 0 || slow_trainer == trainer); }
};

// The hooks of this process: PSTRAIN_TEST_HOOKS parsed on the first call (all defaults when it is unset).
// Throws Error(kUsage) naming the entry when the value is malformed or this build has no test hooks.
const TestHooks& test_hooks();

// The parser behind test_hooks(), for its unit tests: "name=value,name=value".
TestHooks parse_test_hooks(std::string_view text);

}  // namespace pstrain
