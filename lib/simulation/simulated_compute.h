#pragma once
// SimGrid dry-run build only: the trainers' forward and backward passes are not computed but spent as simulated
// time on the rank's simulated host (smpi_execute_benched: it stops SMPI's timing of real code meanwhile), layer by
// layer as the profile measured them. The run must set
// --cfg=smpi/host-speed to the platform hosts' speed (benchmarks/scale/pstrain-dryrun.sh does), so that a profiled
// second is a simulated second; what the ranks really compute (the servers' sums and optimizer, the all-reduce
// trainers' optimizer) is benchmarked by SMPI and counted the same way.
#include "nn/parameter_stream.h"
#include "simulation/job_profile.h"

namespace pstrain::simulation {

// One training step's forward then backward pass; returns the simulated seconds spent. With a `stream`
// (ComputationOverlap::stream_in_place: --overlap) each layer's parameters are reported as the graph model reports
// them: before_forward before the layer's forward, after_backward after its backward; the waits and sends the
// stream makes there are inside the returned time, as they are inside a real step's computation.
double spend_training_step(const JobProfile& profile, nn::ParameterStream* stream = nullptr);

}  // namespace pstrain::simulation
