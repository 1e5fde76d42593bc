#include "launch/policy.h"

#include <algorithm>

#include "core/error.h"

namespace pstrain::launch {

namespace {

// Events the job must be relaunched for: their elastic.jsonl record waits for the next training step.
void await_training(std::vector<Event>& events) {
  for (Event& event : events) {
    if (event.kind == "hosts_added" || event.kind == "hosts_removed" || event.kind == "slots_changed" ||
        event.kind == "job_failed" || event.kind == "host_back") {
      event.awaits_training = true;
    }
  }
}

std::vector<std::string> names(const HostList& hosts) {
  std::vector<std::string> out;
  for (const Host& host : hosts) out.push_back(host.name);
  return out;
}

}  // namespace

Policy::Policy(Limits limits) : limits_(limits) {
  PSTRAIN_ASSERT(limits_.min_np >= 1 && limits_.min_np <= limits_.max_np, "min_np ", limits_.min_np, " max_np ",
                 limits_.max_np);
}

HostList Policy::usable(double now) const {
  HostList hosts;
  for (const Host& host : listed_) {
    const auto cooling = cooldown_until_.find(host.name);
    if (cooling == cooldown_until_.end() || now >= cooling->second) hosts.push_back(host);
  }
  return hosts;
}

void Policy::strike(double now, const std::string& host, std::vector<Event>& events) {
  std::vector<double>& times = strikes_[host];
  std::erase_if(times, [&](double t) { return now - t >= limits_.cooldown_s; });
  times.push_back(now);
  if (static_cast<int>(times.size()) < limits_.failures_before_cooldown) return;
  // Leaving the host out must not leave too few slots to train at all: then it stays (--max-restarts bounds
  // the retries) rather than the job waiting out the cool-down.
  HostList others = usable(now);
  std::erase_if(others, [&](const Host& other) { return other.name == host; });
  const int needed = std::max(limits_.min_np, smallest_world(limits_.rule));
  if (find_host(listed_, host) != nullptr && std::min(total_slots(others), limits_.max_np) < needed) {
    events.push_back({"host_cooldown_skipped",
                      {host},
                      cat(times.size(), " failures or removals within ", limits_.cooldown_s,
                          " s, but without it fewer than ", needed, " slots remain: kept"),
                      false});
    return;
  }
  cooldown_until_[host] = now + limits_.cooldown_s;
  events.push_back({"host_cooldown",
                    {host},
                    cat("left out for ", limits_.cooldown_s, " s: ", times.size(), " failures or removals within ",
                        limits_.cooldown_s, " s"),
                    false});
  times.clear();
}

Decision Policy::on_hosts(double now, const HostList& listed) {
  std::vector<Event> events;
  if (discovery_failing_since_) events.push_back({"discovery_recovered", names(listed), "", false});
  discovery_failing_since_.reset();
  if (listed_once_) {
    std::vector<std::string> added, removed, changed;
    for (const Host& host : listed) {
      const Host* before = find_host(listed_, host.name);
      if (before == nullptr)
        added.push_back(host.name);
      else if (before->slots != host.slots)
        changed.push_back(cat(host.name, ":", before->slots, "->", host.slots));
    }
    for (const Host& host : listed_) {
      if (find_host(listed, host.name) == nullptr) removed.push_back(host.name);
    }
    if (!added.empty()) events.push_back({"hosts_added", added, describe(listed), false});
    if (!removed.empty()) events.push_back({"hosts_removed", removed, describe(listed), false});
    if (!changed.empty()) events.push_back({"slots_changed", changed, describe(listed), false});
    for (const std::string& host : removed) strike(now, host, events);  // a flapping host cools down
  }
  listed_ = listed;
  listed_once_ = true;
  return reconsider(now, std::move(events));
}

Decision Policy::on_discovery_failure(double now, const std::string& why) {
  Decision decision;
  if (!listed_once_) {  // nothing to run on, and the script is wrong from the start: bad input
    phase_ = Phase::kDone;
    decision.action = Action::kGiveUp;
    decision.exit_code = DriverExit::kDiscoveryFailed;
    decision.message = why;
    return decision;
  }
  // Later failures keep the last good list: the job goes on, and a lasting lack of hosts is the wait's business.
  if (!discovery_failing_since_) {
    discovery_failing_since_ = now;
    decision.events.push_back(
        {"discovery_failed", {}, cat(why, "; keeping the last list: ", describe(listed_)), false});
  }
  return decision;
}

Decision Policy::on_job_end(double now, const JobEnd& end) {
  running_.reset();
  Decision decision;
  switch (end.kind) {
    case JobEnd::Kind::kFinished:
      phase_ = Phase::kDone;
      decision.action = Action::kFinish;
      decision.message = "training finished";
      return decision;
    case JobEnd::Kind::kVerdict:
      phase_ = Phase::kDone;
      decision.action = Action::kGiveUp;
      decision.job_exit_code = end.exit_code;
      decision.message = cat("pstrain ended with exit ", end.exit_code,
                             " (its own error, printed above); relaunching would end the same way");
      return decision;
    case JobEnd::Kind::kStopped:
      if (phase_ != Phase::kStopping) {  // a signal from outside the driver reached the job
        phase_ = Phase::kDone;
        decision.action = Action::kFinish;
        decision.message =
            "the job stopped after a checkpoint on a signal from outside the driver; "
            "run the same command again to continue";
        return decision;
      }
      phase_ = Phase::kWaiting;
      waiting_since_.reset();
      return reconsider(now, {});
    case JobEnd::Kind::kFailed: break;
  }
  ++restarts_;
  // Its record waits for the next training step even when no relaunch can follow at once (hosts cooling down).
  std::vector<Event> events{{"job_failed", end.failed_hosts, end.detail, true}};
  for (const std::string& host : end.failed_hosts) strike(now, host, events);
  if (restarts_ > limits_.max_restarts) {
    phase_ = Phase::kDone;
    decision.action = Action::kGiveUp;
    decision.exit_code = DriverExit::kRestartsExhausted;
    decision.message = cat("the job failed ", restarts_, " times, more than --max-restarts ", limits_.max_restarts,
                           "; the last failure: ", end.detail);
    decision.events = std::move(events);
    return decision;
  }
  phase_ = Phase::kWaiting;
  waiting_since_.reset();
  return reconsider(now, std::move(events));
}

Decision Policy::on_tick(double now) {
  if (phase_ == Phase::kDone) return {};
  std::vector<Event> events;
  for (auto it = cooldown_until_.begin(); it != cooldown_until_.end();) {
    if (now < it->second) {
      ++it;
      continue;
    }
    if (find_host(listed_, it->first) != nullptr) events.push_back({"host_back", {it->first}, "cool-down over", false});
    it = cooldown_until_.erase(it);
  }
  if (!events.empty()) return reconsider(now, std::move(events));
  if (phase_ == Phase::kWaiting && waiting_since_ && now - *waiting_since_ >= limits_.elastic_timeout_s) {
    phase_ = Phase::kDone;
    Decision decision;
    decision.action = Action::kGiveUp;
    decision.exit_code = DriverExit::kNotEnoughSlots;
    const int needed = std::max(limits_.min_np, smallest_world(limits_.rule));
    decision.message = cat("only ", std::min(total_slots(usable(now)), limits_.max_np), " usable slot(s) (",
                           describe(usable(now)), ") where ", needed, " are needed (--min-np ", limits_.min_np,
                           "); waited ", limits_.elastic_timeout_s, " s (--elastic-timeout)");
    return decision;
  }
  return {};
}

Decision Policy::reconsider(double now, std::vector<Event> events) {
  Decision decision;
  const HostList hosts = usable(now);
  const int slots = std::min(total_slots(hosts), limits_.max_np);
  const int needed = std::max(limits_.min_np, smallest_world(limits_.rule));
  switch (phase_) {
    case Phase::kDone: break;
    case Phase::kStarting:
    case Phase::kWaiting:
      if (!listed_once_) break;
      if (slots >= needed) {
        running_ = plan_world(hosts, limits_.max_np, limits_.rule);
        decision.action = Action::kLaunch;
        decision.world = running_;
        phase_ = Phase::kRunning;
        waiting_since_.reset();
        await_training(events);
      } else if (!waiting_since_) {
        waiting_since_ = now;
        phase_ = Phase::kWaiting;
        events.push_back({"waiting_for_slots", names(hosts),
                          cat(slots, " usable slot(s), ", needed, " needed (--min-np); waiting up to ",
                              limits_.elastic_timeout_s, " s (--elastic-timeout)"),
                          false});
      }
      break;
    case Phase::kRunning:
      if (world_fits(*running_, hosts) && slots == running_->ranks()) break;
      decision.action = Action::kStop;
      decision.message = cat("the job runs ", running_->ranks(), " ranks on ", describe(running_->hosts),
                             "; the usable hosts are now ", describe(hosts), " (", slots, " ranks)");
      phase_ = Phase::kStopping;
      await_training(events);
      break;
    case Phase::kStopping: await_training(events); break;
  }
  decision.events = std::move(events);
  return decision;
}

}  // namespace pstrain::launch
