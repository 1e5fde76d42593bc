// --mode sync over SyncTransport::kOneSided with node aggregation, the trainer's side (exchange/step_protocol.h
// "Node aggregation"): the trainers of a push group (comm/push_groups.h, the trainers of one node) send their
// sample counts and gradients to the group's leader, which sums them in trainer order weighted by samples and
// pushes the group's mean with the group's count into the group's slot; every rank meets as in a sync step; the
// leader pulls the parameters and broadcasts them to its group. The servers see one push and serve one pull per
// group. Row tables held by rows stay per trainer: each trainer puts its rows and announces its samples, which
// weight them.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/bulk_vector.h"
#include "core/timing.h"
#include "exchange/step_protocol.h"
#include "modes/exchanges.h"
#include "modes/table_rows_exchange.h"

namespace pstrain::modes {

namespace {

class NodeSyncExchange final : public TableRowsExchange {
 public:
  NodeSyncExchange(ps::DataClient& client, ps::ControlClient& control, comm::Communicator group,
                   ps::TableClient* tables)
      : TableRowsExchange(tables),
        client_(client),
        control_(control),
        group_(std::move(group)),
        leader_(group_.rank() == 0),
        members_(group_.size()) {}

  void start(std::span<float> parameters) override { client_.pull(parameters); }

  void step(std::span<const float> gradient, std::size_t count, const exchange::StepPlace&, std::span<float> parameters,
            int& flags) override {
    const comm::Watchdog::Wait wait("a sync step with node aggregation (sum on the node, push, barrier, update, pull)");
    auto start = Clock::now();
    const std::span<const float> dense = gradient.first(client_.plan().total_size());
    if (leader_) {
      const float total = sum_group(dense, static_cast<float>(count));
      client_.push(sum_, total);
    } else {
      send_to_leader(dense, static_cast<float>(count));
    }
    if (tables_ != nullptr) {  // the row slots stay per trainer, weighted by the trainer's own samples
      control_.announce_samples(static_cast<std::int64_t>(count));
      tables_->push(gradient);  // an empty slot when this trainer had no batch
    }
    timers_.push_seconds += seconds_since(start);
    start = Clock::now();
    flags = exchange::wait_for_the_servers_update(flags);
    timers_.sync_seconds += seconds_since(start);
    start = Clock::now();
    const std::span<float> dense_parameters = parameters.first(dense.size());
    if (leader_) client_.pull(dense_parameters);
    MPI_CHECK(MPI_Bcast(dense_parameters.data(), static_cast<int>(dense_parameters.size()), MPI_FLOAT, 0,
                        group_.handle()));  // a copy: every trainer holds the leader's bits
    timers_.pull_seconds += seconds_since(start);
    staleness_.record(0);
  }
  // Every trainer already holds the same dense parameters; evaluation fetches the rows it looks up, batch by batch.
  void finish_pass(std::span<float>) override {}
  void finish() override {}

 private:
  static constexpr int kGradientTag = 1;

  void send_to_leader(std::span<const float> gradient, float count) {
    MPI_CHECK(MPI_Gather(&count, 1, MPI_FLOAT, nullptr, 1, MPI_FLOAT, 0, group_.handle()));
    if (count == 0) return;  // the leader posts no receive for a trainer without samples
    MPI_CHECK(
        MPI_Send(gradient.data(), static_cast<int>(gradient.size()), MPI_FLOAT, 0, kGradientTag, group_.handle()));
  }

  // The group's mean gradient into sum_, each member weighted by its samples over the group's, added in member
  // (= trainer) order whatever order the gradients arrive in; returns the group's samples. One member's gradient
  // is received while the one before it is added.
  float sum_group(std::span<const float> own, float count) {
    counts_.resize(static_cast<std::size_t>(members_));
    MPI_CHECK(MPI_Gather(&count, 1, MPI_FLOAT, counts_.data(), 1, MPI_FLOAT, 0, group_.handle()));
    float total = 0;
    for (const float member_count : counts_) total += member_count;  // in member order, as the sum below
    sum_.assign(own.size(), 0.0f);
    if (total == 0) return 0;  // the servers give a slot without samples no weight
    std::vector<int> senders;  // the other members with samples, in member order
    for (int member = 1; member < members_; ++member) {
      if (counts_[static_cast<std::size_t>(member)] != 0) senders.push_back(member);
    }
    // Two buffers: sender k's gradient arrives in buffer k % 2 while sender k - 1's is added.
    std::array<MPI_Request, 2> requests{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    const auto post = [&](std::size_t k) {
      auto& buffer = incoming_[k % 2];
      buffer.resize(own.size());
      MPI_CHECK(MPI_Irecv(buffer.data(), static_cast<int>(buffer.size()), MPI_FLOAT, senders[k], kGradientTag,
                          group_.handle(), &requests[k % 2]));
    };
    bool first = true;
    const auto add = [&](std::span<const float> term, float weight) {
      if (first) {
        for (std::size_t i = 0; i < term.size(); ++i) sum_[i] = weight * term[i];
      } else {
        for (std::size_t i = 0; i < term.size(); ++i) sum_[i] += weight * term[i];
      }
      first = false;
    };
    if (!senders.empty()) post(0);
    if (count != 0) add(own, count / total);
    for (std::size_t k = 0; k < senders.size(); ++k) {
      MPI_CHECK(MPI_Wait(&requests[k % 2], MPI_STATUS_IGNORE));
      if (k + 1 < senders.size()) post(k + 1);
      add(incoming_[k % 2], counts_[static_cast<std::size_t>(senders[k])] / total);
    }
    return total;
  }

  ps::DataClient& client_;
  ps::ControlClient& control_;
  comm::Communicator group_;  // this trainer's push group, ranked in trainer order: the leader is rank 0
  bool leader_;
  int members_;
  std::vector<float> counts_;                  // leader: each member's samples this step
  BulkVector<float> sum_;                      // leader: the group's mean gradient
  std::array<BulkVector<float>, 2> incoming_;  // leader: the members' gradients as they arrive
};

}  // namespace

std::unique_ptr<exchange::GradientExchange> make_node_sync_exchange(ps::DataClient& client, ps::ControlClient& control,
                                                                    comm::Communicator group, ps::TableClient* tables) {
  return std::make_unique<NodeSyncExchange>(client, control, std::move(group), tables);
}

}  // namespace pstrain::modes
