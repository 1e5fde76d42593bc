#pragma once
// The mpirun line of one launch. Ranks go where the world plan put them through Open MPI's sequential mapper
// (--map-by seq: rank i on line i of the hostfile), with no binding (slots from discovery may exceed cores). The
// one-sided component that works across nodes (osc pt2pt) is on, as in pstrain-launch; --tcp takes the cross-node
// path even on one machine. pstrain gets the user's flags, the split for this size (--num-pservers: the count, or
// -1 where pstrain's sizing rule chooses it; none where there are no servers), --resume auto, and in elastic mode's
// defaults --checkpoint-every-seconds 60 and
// --progress-every-s 1 unless the user set them.
#include <filesystem>
#include <string>
#include <vector>

#include "launch/driver_options.h"
#include "launch/world_plan.h"

namespace pstrain::launch {

// The hostfile for --map-by seq: one host a line, rank order. Open MPI knows this machine by its host name, not
// as "localhost", in a sequential hostfile: localhost and 127.0.0.1 are written as `this_host`.
std::string sequential_hostfile(const World& world, const std::string& this_host);

// `forwarded` names environment variables to pass to every rank (-x NAME).
std::vector<std::string> mpirun_command(const DriverOptions& options, const World& world,
                                        const std::filesystem::path& hostfile,
                                        const std::vector<std::string>& forwarded);

}  // namespace pstrain::launch
