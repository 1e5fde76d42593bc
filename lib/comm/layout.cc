#include "comm/layout.h"

#include <algorithm>

#include "core/error.h"

namespace pstrain::comm {

std::string WorldLayout::describe() const {
  switch (role) {
    case Role::kLocal: return "local";
    case Role::kServer: return cat("rank ", world_rank, " server ", shard_index);
    case Role::kTrainer: return cat("rank ", world_rank, " trainer ", trainer_index);
  }
  return "?";
}

WorldLayout make_layout(int world_rank, int world_size, int requested_pservers, bool collective) {
  PSTRAIN_ASSERT(world_size >= 1 && world_rank >= 0 && world_rank < world_size, world_rank, "/", world_size);
  WorldLayout layout;
  layout.world_rank = world_rank;
  layout.world_size = world_size;
  if (collective) {
    if (requested_pservers > 0) {
      throw Error(ExitCode::kUsage, cat("--num-pservers ", requested_pservers,
                                        ": all-reduce training has no parameter servers (leave it out or give 0)"));
    }
    layout.trainers = world_size;
    layout.trainer_index = world_rank;
    layout.role = world_size == 1 ? Role::kLocal : Role::kTrainer;
    return layout;
  }
  if (world_size == 1) {
    if (requested_pservers > 0) {
      throw Error(ExitCode::kUsage, cat("--num-pservers ", requested_pservers, " needs at least ",
                                        requested_pservers + 1, " ranks (one or more trainers); this job has 1 rank"));
    }
    layout.trainer_index = 0;
    return layout;
  }
  const int pservers = requested_pservers < 0 ? std::max(1, world_size / 2) : requested_pservers;
  if (pservers == 0) {
    throw Error(ExitCode::kUsage, cat("--num-pservers 0 with ", world_size,
                                      " ranks: a multi-rank job needs at least one parameter-server shard"));
  }
  if (pservers >= world_size) {
    throw Error(ExitCode::kUsage, cat("--num-pservers ", pservers, " leaves no trainer among ", world_size,
                                      " ranks (need fewer servers than ranks)"));
  }
  layout.pservers = pservers;
  layout.trainers = world_size - pservers;
  if (world_rank < pservers) {
    layout.role = Role::kServer;
    layout.shard_index = world_rank;
  } else {
    layout.role = Role::kTrainer;
    layout.trainer_index = world_rank - pservers;
  }
  return layout;
}

}  // namespace pstrain::comm
