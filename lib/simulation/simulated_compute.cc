#include "simulation/simulated_compute.h"

#include <mpi.h>
#include <smpi/smpi.h>

namespace pstrain::simulation {

double spend_training_step(const JobProfile& profile, nn::ParameterStream* stream) {
  const double start = MPI_Wtime();
  for (const ProfiledLayer& layer : profile.layers) {
    if (stream != nullptr) {
      for (const auto& [offset, size] : profile.parameter_ranges(layer.name)) stream->before_forward(offset, size);
    }
    smpi_execute_benched(layer.forward_seconds);
  }
  for (auto layer = profile.layers.rbegin(); layer != profile.layers.rend(); ++layer) {
    smpi_execute_benched(layer->backward_seconds);
    if (stream != nullptr) {
      for (const auto& [offset, size] : profile.parameter_ranges(layer->name)) stream->after_backward(offset, size);
    }
  }
  return MPI_Wtime() - start;
}

}  // namespace pstrain::simulation
