// Test tool, run under mpirun: every rank's click predictions gathered and merged at rank 0
// (inference/evaluation_ranks.h gather_predictions) are the run one process holding every sample builds, byte for
// byte. Sample i goes to rank (i * 7) mod N, except that rank 1 holds none (a server); logits take 5 values, so
// every rank's run ties with the others'. Sent in chunks of CHUNK predictions (small: many messages per rank, the
// last one short).
//
// usage: gather_predictions SAMPLES CHUNK
// Prints one line at rank 0; exits 0 when rank 0's run is that run and the other ranks hold none, 1 otherwise.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <span>
#include <vector>

#include "inference/evaluation_ranks.h"
#include "report/ctr_metrics.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: gather_predictions SAMPLES CHUNK\n";
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::size_t samples = std::strtoull(argv[1], nullptr, 10);
  const std::size_t chunk = std::strtoull(argv[2], nullptr, 10);
  pstrain::report::PredictionRun whole;
  pstrain::report::PredictionRun mine;
  for (std::size_t i = 0; i < samples; ++i) {
    const float logit = static_cast<float>(static_cast<int>(i * 2654435761u % 5) - 2) * 0.75f;
    const std::int32_t label = (i * 40503u) % 3 == 0 ? 1 : 0;
    whole.add(std::span(&logit, 1), std::span(&label, 1));
    int owner = static_cast<int>((i * 7) % static_cast<std::size_t>(size));
    if (owner == 1) owner = 0;
    if (owner == rank) mine.add(std::span(&logit, 1), std::span(&label, 1));
  }
  pstrain::report::PredictionRun merged = pstrain::inference::gather_predictions(MPI_COMM_WORLD, mine, chunk);
  int ok = 1;
  if (rank == 0) {
    const auto expected = whole.sorted();
    const auto got = merged.sorted();
    ok = got.size() == expected.size() && std::memcmp(got.data(), expected.data(), got.size_bytes()) == 0 ? 1 : 0;
    std::cout << (ok != 0 ? "equal" : "DIFFERENT") << ": " << got.size() << " predictions gathered from " << size
              << " ranks in chunks of " << chunk << ", " << expected.size() << " expected\n";
  } else if (merged.size() != 0) {
    ok = 0;  // only rank 0 holds the gathered run
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  MPI_Finalize();
  return all != 0 ? 0 : 1;
}
