#include "run_common/update_plan.h"

#include <algorithm>

#include "modes/traits.h"
#include "run_common/run_schedule.h"

namespace pstrain::run_common {

double UpdatePlan::learning_rate_at(std::int64_t global_step) const {
  const std::int64_t updates = global_step * static_cast<std::int64_t>(updates_per_global_step);
  return optim::scheduled_learning_rate(optimizer, static_cast<std::uint64_t>(std::max<std::int64_t>(updates, 1)));
}

UpdatePlan plan_updates(const config::TrainConfig& config, const comm::WorldLayout& layout, const DataPlan& data) {
  UpdatePlan plan;
  plan.optimizer = config.optimizer;
  const auto per_pass = static_cast<std::uint64_t>(RunSchedule::updates_per_pass(config, layout, data));
  plan.optimizer.total_updates = per_pass * static_cast<std::uint64_t>(config.passes);
  plan.optimizer.updates_per_pass = plan.optimizer.total_updates / static_cast<std::uint64_t>(config.passes);
  if (!modes::trainers_step_together(config.mode, layout.pservers)) {
    plan.updates_per_global_step = static_cast<std::uint64_t>(layout.trainers);
  }
  if (modes::mode_traits(config.mode).each_push_updates && layout.pservers > 0) {
    plan.optimizer.learning_rate /= layout.trainers;
  }
  return plan;
}

}  // namespace pstrain::run_common
