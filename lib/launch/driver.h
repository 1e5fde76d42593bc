#pragma once
// The elastic driver's process layer: runs the discovery script every interval and one mpirun job at a time,
// feeds what it sees to the Policy, and carries out its answers (launch, stop with SIGUSR1, finish, give up).
//
// Control loop (who waits for whom): the driver never blocks on a child. Each turn it waits at most 100 ms for
// output from the job or the discovery script (poll), then reads what came, reaps children that ended, and asks
// the policy about the time passing. Signals to the driver (SIGTERM, SIGINT, SIGHUP, SIGUSR1) set a flag the loop
// reads: the first asks the job to checkpoint and stop (SIGUSR1 to mpirun, which forwards it to every rank) and
// ends the driver when it has; a second (2 s or more later) ends the job at once. On every way out the job's process
// group is ended, and the driver, a child subreaper, ends any rank left orphaned: nothing stays running.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/discovery.h"
#include "launch/driver_options.h"
#include "launch/event_log.h"
#include "launch/job_output.h"
#include "launch/policy.h"
#include "launch/process.h"

namespace pstrain::launch {

class Driver {
 public:
  explicit Driver(DriverOptions options);
  ~Driver();
  int run();  // the exit code (exit_codes.h)

 private:
  struct Pending {
    Event event;
    double time;
    int launch;  // the job running (or about to) when it happened
  };

  void turn();
  void wait_for_input() const;
  void poll_discovery(double now);
  void poll_job(double now);
  void handle_signal(double now);
  void apply(double now, Decision decision);
  void launch(double now, const World& world);
  void stop_job(double now, const std::string& why);
  JobEnd classify(const ExitStatus& status) const;
  void training_started(double now);
  void record(double now, const Event& event, std::optional<double> seconds = std::nullopt);
  void finish(int code, const std::string& message);

  DriverOptions options_;
  Policy policy_;
  std::unique_ptr<EventLog> log_;
  std::unique_ptr<DiscoveryRun> discovery_;
  double next_discovery_ = 0;
  std::unique_ptr<Process> job_;
  std::optional<World> world_;  // the running job's
  JobOutput output_;
  LineReader job_reader_;
  double last_progress_echo_ = -1e9;
  int launches_ = 0;
  std::optional<ExitStatus> terminated_;  // the job's status when the driver ended it (a stop that timed out)
  bool stop_sent_ = false;
  double stop_deadline_ = 0;
  std::optional<TrainingPosition> previous_reached_;  // how far the job before this one got
  std::vector<Pending> pending_;                      // events whose record waits for the next training step
  int signalled_ = 0;                                 // signals the driver received and handled
  double first_signal_time_ = 0;                      // when the first of them came
  std::optional<int> exit_code_;
  std::string exit_message_;
};

}  // namespace pstrain::launch
