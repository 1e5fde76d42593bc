#include "ps/data_client.h"

#include <limits>

#include "comm/mpi_check.h"
#include "core/error.h"

namespace pstrain::ps {

using comm::WindowLock;

DataClient::DataClient(PsWindows& windows, const ShardPlan& plan, const comm::WorldLayout& layout)
    : windows_(windows), plan_(plan), layout_(layout), versions_(plan.shards(), 0) {
  PSTRAIN_ASSERT(plan.total_size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "model too large for int displacements: ", plan.total_size());
  for (int shard = 0; shard < plan.shards(); ++shard) {
    std::vector<int> lengths;
    std::vector<int> displacements;
    for (const Segment& segment : plan.segments(shard)) {
      lengths.push_back(static_cast<int>(segment.length));
      displacements.push_back(static_cast<int>(segment.global_offset));
    }
    shard_types_.push_back(comm::Datatype::indexed_floats(lengths, displacements));
  }
}

void DataClient::push(std::span<const float> gradient, float count) {
  // A trainer's vector may carry row caches after the blocks (ps/table_client.h): they go by rows.
  PSTRAIN_ASSERT(gradient.size() >= plan_.total_size(), gradient.size(), " vs ", plan_.total_size());
  // One epoch over all shards so the puts to different shards overlap; end_push completes them everywhere.
  begin_push();
  for (int shard = 0; shard < plan_.shards(); ++shard) {
    const auto slot = static_cast<MPI_Aint>(layout_.push_slot() * slot_stride(plan_.shard_size(shard)));
    MPI_CHECK(MPI_Put(gradient.data(), 1, shard_types_[shard].handle(), shard, slot,
                      static_cast<int>(plan_.shard_size(shard)), MPI_FLOAT, windows_.grads.handle()));
  }
  end_push(count);
}

void DataClient::begin_push() {
  MPI_CHECK(MPI_Win_lock_all(0, windows_.grads.handle()));
}

void DataClient::push_block(const Block& block, std::span<const float> gradient) {
  const auto slot = layout_.push_slot() * slot_stride(plan_.shard_size(block.shard));
  MPI_CHECK(MPI_Put(gradient.data() + block.place.global_offset, static_cast<int>(block.place.length), MPI_FLOAT,
                    block.shard, static_cast<MPI_Aint>(slot + block.place.local_offset),
                    static_cast<int>(block.place.length), MPI_FLOAT, windows_.grads.handle()));
}

void DataClient::end_push(float count) {
  const MPI_Win window = windows_.grads.handle();
  // Each slot's trailer (windows.h): the count, then the version of the shard's parameters the gradient came from.
  trailers_.resize(kSlotTrailer * plan_.shards());
  for (int shard = 0; shard < plan_.shards(); ++shard) {
    float* trailer = trailers_.data() + kSlotTrailer * shard;
    trailer[0] = count;
    write_version(trailer + 1, versions_[shard]);
    const std::size_t slice = plan_.shard_size(shard);
    const auto at = static_cast<MPI_Aint>(layout_.push_slot() * slot_stride(slice) + slice);
    MPI_CHECK(MPI_Put(trailer, kSlotTrailer, MPI_FLOAT, shard, at, kSlotTrailer, MPI_FLOAT, window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));  // the trailers are read until here
}

void DataClient::pull(std::span<float> parameters) {
  PSTRAIN_ASSERT(parameters.size() >= plan_.total_size(), parameters.size(), " vs ", plan_.total_size());
  const MPI_Win window = windows_.params.handle();
  std::vector<float> headers(kParamsHeader * plan_.shards());
  // A shared lock on every shard in one epoch (MPI_Win_lock_all): a server updating its slice holds an exclusive
  // lock, so each slice arrives whole and matches the version read with it. (Separate MPI_Win_lock calls held on
  // several targets at once hang under osc/pt2pt in Open MPI 4.1; lock_all does not.)
  MPI_CHECK(MPI_Win_lock_all(0, window));
  for (int shard = 0; shard < plan_.shards(); ++shard) {
    MPI_CHECK(MPI_Get(headers.data() + kParamsHeader * shard, kParamsHeader, MPI_FLOAT, shard, 0, kParamsHeader,
                      MPI_FLOAT, window));
    MPI_CHECK(MPI_Get(parameters.data(), 1, shard_types_[shard].handle(), shard, kParamsHeader,
                      static_cast<int>(plan_.shard_size(shard)), MPI_FLOAT, window));
  }
  MPI_CHECK(MPI_Win_unlock_all(window));
  for (int shard = 0; shard < plan_.shards(); ++shard) {
    versions_[shard] = read_version(headers.data() + kParamsHeader * shard);
  }
}

}  // namespace pstrain::ps
