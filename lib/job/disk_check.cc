#include "job/disk_check.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <system_error>

#include "core/error.h"
#include "optim/optimizer.h"
#include "optim/row_optimizer.h"

namespace pstrain::job {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(double bytes) {
  std::ostringstream out;
  const double value = bytes / kGiB;
  if (value >= 100) {
    out << std::fixed << std::setprecision(0) << value << " GiB";
  } else {
    out << std::setprecision(3) << value << " GiB";
  }
  return out.str();
}

// The optimizer's state a checkpoint holds, in floats: per element of the model (one rank, all-reduce), per element
// of the dense parameters and per row of the tables the servers hold by rows (sync, async, ssp), or each
// trainer's own over the dense parameters (geo, whose servers keep no state).
double state_floats(const run_common::JobContext& job) {
  const auto per_element = static_cast<double>(optim::make_optimizer(job.config.optimizer, 0)->state().size());
  if (!job.mode().has_servers || job.layout.world_size == 1) {
    return per_element * static_cast<double>(job.model.parameter_count);
  }
  const auto dense = static_cast<double>(job.dense_count);
  if (job.mode().trainers_step_alone) return per_element * dense * job.layout.trainers;
  double floats = per_element * dense;
  for (std::size_t t = 0; t < job.tables.size(); ++t) {
    const auto one_row = optim::make_row_optimizer(job.config.optimizer, 1, job.tables.table(t).width);
    for (const auto& entry : one_row->state()) {
      floats += static_cast<double>(job.tables.rows(t).rows()) * static_cast<double>(entry.second->size());
    }
  }
  return floats;
}

// How many checkpoints exist at once at most: the newest --keep-checkpoints and the one being written, of those
// the run writes (one at every pass's end, one every --checkpoint-every-steps).
double checkpoints_at_once(const run_common::JobContext& job) {
  const config::TrainConfig& config = job.config;
  std::uint64_t written = static_cast<std::uint64_t>(config.passes);
  if (config.checkpoint_every_steps > 0) {
    written += job.updates.optimizer.total_updates / static_cast<std::uint64_t>(config.checkpoint_every_steps);
  }
  if (config.keep_checkpoints <= 0) return static_cast<double>(written);
  return static_cast<double>(std::min<std::uint64_t>(written, static_cast<std::uint64_t>(config.keep_checkpoints) + 1));
}

}  // namespace

DiskNeed disk_need(const run_common::JobContext& job) {
  const double parameters = static_cast<double>(job.model.parameter_count) * sizeof(float);
  const double checkpoint = parameters + state_floats(job) * sizeof(float);
  const double kept = checkpoints_at_once(job);
  DiskNeed need;
  need.bytes = job.config.passes * parameters + kept * checkpoint;
  std::ostringstream arithmetic;
  arithmetic << job.config.passes << " pass folders of " << gib(parameters) << " (the parameters) and up to " << kept
             << " checkpoints of " << gib(checkpoint) << " at once (the parameters and the optimizer's state)";
  need.arithmetic = arithmetic.str();
  return need;
}

std::optional<double> free_bytes(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::path existing = std::filesystem::absolute(folder, error);
  if (error) return std::nullopt;
  while (!std::filesystem::exists(existing, error) && existing.has_parent_path() && existing != existing.root_path()) {
    existing = existing.parent_path();
  }
  const std::filesystem::space_info space = std::filesystem::space(existing, error);
  if (error) return std::nullopt;
  return static_cast<double>(space.available);
}

std::optional<comm::Failure> check_output_disk(const run_common::JobContext& job) {
  if (job.layout.world_rank != 0) return std::nullopt;
  const DiskNeed need = disk_need(job);
  const std::optional<double> available = free_bytes(job.config.output_dir);
  if (!available || need.bytes <= *available) return std::nullopt;
  return comm::Failure{static_cast<int>(ExitCode::kUsage),
                       cat("the run's outputs do not fit the disk of ", job.config.output_dir.string(), ": ",
                           need.arithmetic, " need ", gib(need.bytes), ", ", gib(*available),
                           " is free there; keep fewer checkpoints (--keep-checkpoints), train fewer passes, or "
                           "write to another --output-dir")};
}

}  // namespace pstrain::job
