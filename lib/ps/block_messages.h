#pragma once
// The messages of a sync step between trainers and shards (exchange/step_protocol.h states who waits for whom),
// on a communicator of their own (a duplicate of the world's): the tags both sides use.
//   kCountTag        trainer -> every shard: the step's sample count, one float
//   block_tag(b)     trainer -> the shard holding block b (ShardPlan::blocks() order): that block of the gradient;
//                    shard -> every trainer: that block of the updated parameters
#include <mpi.h>

#include <cstddef>

#include "comm/mpi_check.h"
#include "core/error.h"

namespace pstrain::ps {

inline constexpr int kCountTag = 0;

inline int block_tag(std::size_t block) {
  return 1 + static_cast<int>(block);
}

// Error(kUsage) when the plan has more blocks than MPI's tags can name.
inline void check_block_tags(MPI_Comm channel, std::size_t blocks) {
  void* value = nullptr;
  int found = 0;
  MPI_CHECK(MPI_Comm_get_attr(channel, MPI_TAG_UB, &value, &found));
  const int upper = found != 0 ? *static_cast<int*>(value) : 32767;  // the least the standard allows
  if (blocks >= static_cast<std::size_t>(upper)) {
    throw Error(ExitCode::kUsage, cat("the model is dealt in ", blocks, " blocks, more than this MPI's ", upper,
                                      " message tags can name in a sync step: raise --block-size"));
  }
}

}  // namespace pstrain::ps
