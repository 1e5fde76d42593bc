#include "inference/evaluation_ranks.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "comm/datatype.h"
#include "comm/mpi_check.h"
#include "core/error.h"

namespace pstrain::inference {

namespace {

constexpr int kPredictionTag = 4104;  // the only point-to-point messages of an evaluation: the gathered runs

}  // namespace

SampleRange evaluator_share(std::uint64_t samples, std::size_t batch, int evaluator, int evaluators) {
  PSTRAIN_ASSERT(batch > 0 && evaluators > 0 && evaluator >= 0 && evaluator < evaluators, "evaluator ", evaluator,
                 " of ", evaluators, ", batch ", batch);
  const std::uint64_t batches = (samples + batch - 1) / batch;
  const auto ranks = static_cast<std::uint64_t>(evaluators);
  const auto index = static_cast<std::uint64_t>(evaluator);
  const std::uint64_t base = batches / ranks;
  const std::uint64_t extra = batches % ranks;
  const std::uint64_t first_batch = index * base + std::min(index, extra);
  const std::uint64_t my_batches = base + (index < extra ? 1 : 0);
  const std::uint64_t first = std::min(samples, first_batch * batch);
  const std::uint64_t end = std::min(samples, (first_batch + my_batches) * batch);
  return {first, end - first};
}

EvaluationSums no_sums(std::size_t classes, bool language_model) {
  EvaluationSums sums;
  if (!language_model) sums.confusion.assign(classes * classes, 0);
  return sums;
}

report::PredictionRun gather_predictions(MPI_Comm comm, report::PredictionRun& mine, std::size_t chunk) {
  PSTRAIN_ASSERT(chunk > 0 && chunk <= static_cast<std::size_t>(std::numeric_limits<int>::max()), "chunk ", chunk);
  int rank = 0;
  int size = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  const std::span<const report::Prediction> run = mine.sorted();
  const std::uint64_t length = run.size();
  std::vector<std::uint64_t> lengths(rank == 0 ? static_cast<std::size_t>(size) : 0);
  MPI_CHECK(MPI_Gather(&length, 1, MPI_UINT64_T, lengths.data(), 1, MPI_UINT64_T, 0, comm));
  const comm::Datatype prediction = comm::Datatype::contiguous_bytes(sizeof(report::Prediction));
  // Who waits for whom: every other rank sends its run in chunks to rank 0, which receives rank 1's, then rank
  // 2's..., each of the lengths it gathered (a rank with none sends nothing).
  const auto pieces = [chunk](std::uint64_t count, const auto& each) {
    for (std::uint64_t first = 0; first < count; first += chunk) {
      each(first, static_cast<int>(std::min<std::uint64_t>(chunk, count - first)));
    }
  };
  if (rank != 0) {
    pieces(length, [&](std::uint64_t first, int count) {
      MPI_CHECK(MPI_Send(run.data() + first, count, prediction.handle(), 0, kPredictionTag, comm));
    });
    return {};
  }
  std::uint64_t total = 0;
  for (const std::uint64_t each : lengths) total += each;
  std::vector<report::Prediction> runs(static_cast<std::size_t>(total));
  std::copy(run.begin(), run.end(), runs.begin());
  mine = {};  // rank 0's own run is in `runs` now
  std::uint64_t at = lengths[0];
  for (int source = 1; source < size; ++source) {
    pieces(lengths[static_cast<std::size_t>(source)], [&](std::uint64_t first, int count) {
      MPI_CHECK(MPI_Recv(runs.data() + at + first, count, prediction.handle(), source, kPredictionTag, comm,
                         MPI_STATUS_IGNORE));
    });
    at += lengths[static_cast<std::size_t>(source)];
  }
  return report::PredictionRun::from_runs(std::move(runs), lengths);
}

EvaluationSums sum_over_ranks(MPI_Comm comm, EvaluationSums mine) {
  int rank = 0;
  int size = 1;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_CHECK(MPI_Comm_size(comm, &size));
  // samples, correct, then the confusion matrix: one reduction of integers, exact in any order.
  std::vector<std::uint64_t> counts{mine.samples, mine.correct};
  counts.insert(counts.end(), mine.confusion.begin(), mine.confusion.end());
  std::vector<std::uint64_t> total(counts.size(), 0);
  MPI_CHECK(MPI_Reduce(counts.data(), total.data(), static_cast<int>(counts.size()), MPI_UINT64_T, MPI_SUM, 0, comm));
  // MPI_SUM over doubles may combine them in any order; gathered, they are added in rank order.
  std::vector<double> losses(rank == 0 ? static_cast<std::size_t>(size) : 0);
  MPI_CHECK(MPI_Gather(&mine.loss_sum, 1, MPI_DOUBLE, losses.data(), 1, MPI_DOUBLE, 0, comm));
  report::PredictionRun clicks = gather_predictions(comm, mine.clicks);
  if (rank != 0) return mine;
  EvaluationSums sums;
  sums.clicks = std::move(clicks);
  sums.samples = total[0];
  sums.correct = total[1];
  sums.confusion.assign(total.begin() + 2, total.end());
  for (const double loss : losses) sums.loss_sum += loss;
  return sums;
}

}  // namespace pstrain::inference
