#include "run_common/model_state.h"

#include "comm/mpi_check.h"
#include "comm/watchdog.h"

namespace pstrain::run_common {

ModelStateAverage::ModelStateAverage(nn::Model& model, MPI_Comm trainers)
    : model_(model),
      trainers_(trainers),
      state_(model.state_layout().empty() ? 0 : model.state_layout().back().offset + model.state_layout().back().size),
      sum_(state_.size()) {
  MPI_CHECK(MPI_Comm_size(trainers_, &trainer_count_));
}

void ModelStateAverage::average() {
  if (state_.empty()) return;
  model_.get_state(state_);
  if (trainer_count_ == 1) return;
  const comm::Watchdog::Wait wait("averaging the batch-norm statistics over the trainers");
  const int count = static_cast<int>(state_.size());
  MPI_CHECK(MPI_Reduce(state_.data(), sum_.data(), count, MPI_FLOAT, MPI_SUM, 0, trainers_));
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(trainers_, &rank));
  if (rank == 0) {
    const float inverse = 1.0f / static_cast<float>(trainer_count_);
    for (std::size_t i = 0; i < state_.size(); ++i) state_[i] = sum_[i] * inverse;
  }
  MPI_CHECK(MPI_Bcast(state_.data(), count, MPI_FLOAT, 0, trainers_));
  model_.set_state(state_);
}

}  // namespace pstrain::run_common
