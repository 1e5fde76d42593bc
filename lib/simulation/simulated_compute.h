#pragma once
// SimGrid dry-run build only: the trainers' forward and backward passes are not computed but spent as simulated
// time on the rank's simulated host (smpi_execute_benched: it stops SMPI's timing of real code meanwhile), layer by
// layer as the profile measured them. The run must set
// --cfg=smpi/host-speed to the platform hosts' speed (benchmarks/scale/pstrain-dryrun.sh does), so that a profiled
// second is a simulated second; what the ranks really compute (the servers' sums and optimizer, the all-reduce
// trainers' optimizer) is benchmarked by SMPI and counted the same way.
#include "simulation/job_profile.h"

namespace pstrain::simulation {

// One training step's forward then backward pass; returns the simulated seconds spent.
double spend_training_step(const JobProfile& profile);

}  // namespace pstrain::simulation
