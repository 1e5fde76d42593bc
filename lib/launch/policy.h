#pragma once
// The elastic driver's decisions, apart from processes and clocks: the driver reports what it saw (a host list,
// a failed discovery, the job's end, the time passing) and the policy answers with one action. Time is a number
// of seconds given by the caller, so tests script whole scenarios without waiting.
//
// Protocol (who waits for whom): the driver runs one job at a time. While it runs, a change of the usable hosts
// that the job no longer fits, or that allows more ranks, answers kStop (the driver sends SIGUSR1: the job writes
// a checkpoint at its next step and exits 0); the policy then waits for on_job_end, and relaunches on the hosts
// usable at that moment (the newest list, changes during the stop included). A job that fails is relaunched at
// once on what remains, from the newest checkpoint (--resume auto). With fewer than min_np usable slots no job
// runs; the policy waits for hosts and gives up after elastic_timeout_s.
//
// Hosts: a host whose ranks failed, or that left the discovery list, gets a strike; failures_before_cooldown
// strikes within cooldown_s put it in cool-down for cooldown_s: it is not used, even when listed, until then;
// unless the other hosts could not hold min_np ranks without it (then it stays: a job beats no job).
// Restarts: every relaunch after a failure counts; the (max_restarts + 1)-th failure ends the driver. Planned
// resizes do not count.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch/exit_codes.h"
#include "launch/host_list.h"
#include "launch/world_plan.h"

namespace pstrain::launch {

struct Limits {
  int min_np = 1;
  int max_np = 1;
  int max_restarts = 10;
  double elastic_timeout_s = 600;
  double cooldown_s = 60;
  int failures_before_cooldown = 2;
  LayoutRule rule;
};

// How a job ended, as the driver read it from its exit status and output.
struct JobEnd {
  enum class Kind {
    kFinished,  // exit 0, training complete
    kStopped,   // exit 0 after a checkpoint on a signal
    kVerdict,   // pstrain's own error (bad flag, data, output, diverged): relaunching would end the same way
    kFailed,    // a rank or host lost (killed, crashed, stalled): relaunch from the newest checkpoint
  };
  Kind kind = Kind::kFailed;
  int exit_code = 0;
  std::vector<std::string> failed_hosts;  // hosts of the ranks mpirun named as failed
  std::string detail;                     // "rank 2 on node x exited on signal 9"
};

struct Event {
  std::string kind;  // hosts_added, hosts_removed, slots_changed, job_failed, host_cooldown, host_back, ...
  std::vector<std::string> hosts;
  std::string detail;
  // A change that the job has to be relaunched for: its record waits for the next training step (elastic.jsonl
  // then says how long the change cost); other events are recorded at once.
  bool awaits_training = false;
};

enum class Action { kNone, kLaunch, kStop, kFinish, kGiveUp };

struct Decision {
  Action action = Action::kNone;
  std::optional<World> world;  // kLaunch
  DriverExit exit_code = DriverExit::kOk;
  int job_exit_code = 0;  // kGiveUp on a job's own verdict: the job's code, passed through
  std::string message;    // why (kStop, kGiveUp, kFinish)
  std::vector<Event> events;
};

enum class Phase { kStarting, kWaiting, kRunning, kStopping, kDone };

class Policy {
 public:
  explicit Policy(Limits limits);

  Decision on_hosts(double now, const HostList& listed);
  Decision on_discovery_failure(double now, const std::string& why);
  Decision on_job_end(double now, const JobEnd& end);
  // Timers: cool-downs that end, the wait for hosts, a discovery failing for too long.
  Decision on_tick(double now);

  Phase phase() const { return phase_; }
  const std::optional<World>& running() const { return running_; }
  int restarts() const { return restarts_; }
  HostList usable(double now) const;  // listed hosts minus those in cool-down

 private:
  Decision reconsider(double now, std::vector<Event> events);
  void strike(double now, const std::string& host, std::vector<Event>& events);

  Limits limits_;
  Phase phase_ = Phase::kStarting;
  HostList listed_;
  bool listed_once_ = false;
  std::optional<World> running_;
  std::optional<double> waiting_since_;
  std::optional<double> discovery_failing_since_;
  int restarts_ = 0;
  std::map<std::string, std::vector<double>> strikes_;  // host -> times of its recent strikes
  std::map<std::string, double> cooldown_until_;
};

}  // namespace pstrain::launch
