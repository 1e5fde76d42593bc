#pragma once
// How ranks share an evaluation (`mpirun -np N pstrain evaluate`): each evaluator scores a contiguous run of whole
// batches of the data, and rank 0 adds up everyone's sums. Every batch is the batch one process would run (the
// same samples, the same size), so every sample's logits have the same bits: the counts, the accuracy and the
// confusion matrix equal one process's exactly, and only the loss's sum is added in another order (the ranks'
// partial sums, then those in rank order), which may change its last bits (1e-15 relative, well inside 1e-9).
// A click model's CTR metrics are computed at rank 0 from every rank's predictions (gather_predictions), so they
// equal one process's to the bit.
#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "inference/evaluation.h"

namespace pstrain::inference {

// Samples [first, first + count): evaluator `evaluator` of `evaluators`' share of `samples` in batches of `batch`.
// The ceil(samples / batch) batches are dealt in contiguous runs, the first (batches mod evaluators) evaluators
// one batch more; an evaluator may get none.
struct SampleRange {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};
SampleRange evaluator_share(std::uint64_t samples, std::size_t batch, int evaluator, int evaluators);

// Sums holding nothing, of the shape every rank passes to sum_over_ranks.
EvaluationSums no_sums(std::size_t classes, bool language_model);

// Collective over `comm`: every rank's sums added up at rank 0 (elsewhere: this rank's own). The counts are
// summed exactly (MPI_UINT64_T); the loss sums are gathered and added in rank order, the same order every run; a
// click model's predictions are gathered (gather_predictions), so its CTR metrics are one process's to the bit.
EvaluationSums sum_over_ranks(MPI_Comm comm, EvaluationSums mine);

// Collective over `comm`: every rank's predictions at rank 0, merged into the sorted run of them all, which is the
// one run one process scoring every sample would hold (report/ctr_metrics.h: the union's run depends only on the
// predictions, not on how they were split); elsewhere an empty run. A rank may hold none (a server, an evaluator
// without a batch). Each run travels as it is, in messages of at most `chunk` predictions (an 8-byte MPI
// datatype, so that a count is in predictions and fits an int whatever the test set's size), rank after rank.
// Memory at rank 0: 8 bytes per prediction of every rank, twice that while it merges (from_runs).
inline constexpr std::size_t kPredictionChunk = std::size_t{1} << 27;  // 1 GiB per message
report::PredictionRun gather_predictions(MPI_Comm comm, report::PredictionRun& mine,
                                         std::size_t chunk = kPredictionChunk);

}  // namespace pstrain::inference
