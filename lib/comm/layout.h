#pragma once
// Rank -> role. Ranks [0, P) are parameter-server shards, ranks [P, N) are trainers; one rank trains alone.
#include <string>

#include "comm/push_groups.h"

namespace pstrain::comm {

enum class Role { kLocal, kServer, kTrainer };

struct WorldLayout {
  int world_rank = 0;
  int world_size = 1;
  int pservers = 0;
  int trainers = 1;
  Role role = Role::kLocal;
  int shard_index = -1;    // servers: 0..P-1
  int trainer_index = -1;  // trainers and local: 0..T-1
  // Rank among the ranks of this node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)): chooses the GPU. Never taken
  // from SLURM_LOCALID and friends, which are wrong under mpirun inside an allocation.
  int local_rank = 0;
  int local_size = 1;
  int local_trainer_rank = 0;  // rank among the trainers of this node: trainer k uses GPU k mod GPUs
  // Which trainers push together (--node-aggregation, comm/push_groups.h); empty: every trainer alone.
  PushGroups push_groups;

  // The gradient slots each server holds (ps/windows.h): one per push group.
  int push_slots() const { return push_groups.empty() ? trainers : push_groups.groups(); }
  // A trainer's slot on every server: its push group's.
  int push_slot() const { return push_groups.empty() ? trainer_index : push_groups.group_of(trainer_index); }
  bool aggregates_pushes() const { return !push_groups.empty() && push_groups.aggregates(); }

  bool is_server() const { return role == Role::kServer; }
  bool is_trainer() const { return role != Role::kServer; }
  // The trainer that evaluates, prints the per-pass line and writes pass folders.
  bool is_lead_trainer() const { return is_trainer() && trainer_index == 0; }
  int trainer_rank(int trainer) const { return pservers + trainer; }
  std::string describe() const;  // "rank 2 trainer 1", "rank 0 server 0", "local"
};

// requested_pservers < 0 means "default": half the ranks rounded down, at least 1 with 2 or more ranks.
// Throws pstrain::Error(kUsage) for an impossible layout (P >= ranks, P == 0 with several ranks).
// With `collective` (--mode allreduce) there are no servers: every rank is a trainer (requested_pservers must
// be 0 or default).
WorldLayout make_layout(int world_rank, int world_size, int requested_pservers, bool collective = false);

}  // namespace pstrain::comm
