#include "inference/evaluation_ranks.h"

#include <algorithm>
#include <vector>

#include "comm/mpi_check.h"
#include "core/error.h"

namespace pstrain::inference {

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

EvaluationSums sum_over_ranks(MPI_Comm comm, const EvaluationSums& mine) {
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
  if (rank != 0) return mine;
  EvaluationSums sums;
  sums.samples = total[0];
  sums.correct = total[1];
  sums.confusion.assign(total.begin() + 2, total.end());
  for (const double loss : losses) sums.loss_sum += loss;
  return sums;
}

}  // namespace pstrain::inference
