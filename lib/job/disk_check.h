#pragma once
// Whether the run's outputs fit the disk, from the plan alone, before anything is written: a model of multi-GB row
// tables writes its parameters into every pass folder and its parameters with the optimizer's state into every
// checkpoint, and a disk that fills half-way into a run ends it at the next write. The run is refused at the start
// instead, with the arithmetic and what to change.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "run_common/job_context.h"

namespace pstrain::job {

// What the run will write at most, in bytes, and how that figure is made: a pass folder per pass (the whole model's
// parameters) and the checkpoints that exist at once (--keep-checkpoints of them, plus the one being written; all of
// them with --keep-checkpoints 0), each the parameters and the optimizer's state as the run holds it.
struct DiskNeed {
  double bytes = 0;
  std::string arithmetic;
};
DiskNeed disk_need(const run_common::JobContext& job);

// The space free to this user on the file system that will hold `folder` (its nearest existing ancestor's); none
// where it cannot be read (then nothing is checked).
std::optional<double> free_bytes(const std::filesystem::path& folder);

// On rank 0 (others: none): a failure (kUsage) when disk_need() exceeds the space free for the output folder.
std::optional<comm::Failure> check_output_disk(const run_common::JobContext& job);

}  // namespace pstrain::job
