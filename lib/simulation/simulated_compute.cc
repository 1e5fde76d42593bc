#include "simulation/simulated_compute.h"

#include <mpi.h>
#include <smpi/smpi.h>

namespace pstrain::simulation {

double spend_training_step(const JobProfile& profile) {
  const double start = MPI_Wtime();
  for (const ProfiledLayer& layer : profile.layers) smpi_execute_benched(layer.forward_seconds);
  for (auto layer = profile.layers.rbegin(); layer != profile.layers.rend(); ++layer)
    smpi_execute_benched(layer->backward_seconds);
  return MPI_Wtime() - start;
}

}  // namespace pstrain::simulation
