#include "launch/driver.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "core/error.h"
#include "core/files.h"
#include "core/log.h"
#include "launch/mpirun_command.h"

extern char** environ;

namespace pstrain::launch {

namespace {

std::atomic<int> signals_received{0};
std::atomic<int> last_signal{0};

extern "C" void on_driver_signal(int number) {
  last_signal.store(number);
  signals_received.fetch_add(1);
}

void install_signal_handlers() {
  struct sigaction action = {};
  action.sa_handler = on_driver_signal;
  sigemptyset(&action.sa_mask);
  for (const int number : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaction(number, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a reader of our stdout that goes away must not end the driver mid-job
}

// Seconds on a clock that never jumps (timeouts), and the wall-clock time of such a moment (records).
double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
const double unix_offset =
    std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() - now_seconds();

// What every rank gets from the driver's environment (-x): the user's PSTRAIN_* settings and the library
// settings pstrain-launch forwards. PSTRAIN_BIN is the launcher's own (pstrain rejects unknown PSTRAIN_*).
std::vector<std::string> forwarded_environment() {
  ::setenv("HDF5_USE_FILE_LOCKING", "FALSE", /*overwrite=*/0);  // shared data on NFS
  std::vector<std::string> names{"HDF5_USE_FILE_LOCKING"};
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text(*entry);
    const std::string name = text.substr(0, text.find('='));
    const bool library = name == "LD_LIBRARY_PATH" || name == "OPENBLAS_NUM_THREADS" || name == "OMP_NUM_THREADS" ||
                         name == "OPENBLAS_CORETYPE";
    if (library || (name.rfind("PSTRAIN_", 0) == 0 && name != "PSTRAIN_BIN")) names.push_back(name);
  }
  return names;
}

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace

Driver::Driver(DriverOptions options) : options_(std::move(options)), policy_(options_.limits) {
  if (::getuid() == 0) {  // mpirun refuses root without these (containers run as root)
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  ::unsetenv("PSTRAIN_BIN");  // mpirun hands its environment to local ranks
  check_discovery_script(options_.discovery_script);
  log_ = std::make_unique<EventLog>(options_.output_dir / "elastic.jsonl");
}

Driver::~Driver() = default;

int Driver::run() {
  install_signal_handlers();
  become_subreaper();
  const double start = now_seconds();
  record(start, {"driver_started",
                 {},
                 cat("--min-np ", options_.limits.min_np, " --max-np ", options_.limits.max_np, ", discovery ",
                     options_.discovery_script.string()),
                 false});
  next_discovery_ = start;
  while (!exit_code_) turn();
  const double end = now_seconds();
  if (job_) job_->terminate(10.0);
  job_.reset();
  discovery_.reset();
  if (const auto orphans = end_orphans(); !orphans.empty()) {
    std::string names;
    for (const std::string& orphan : orphans) names += (names.empty() ? "" : ", ") + orphan;
    log_warning("ended ", orphans.size(), " process(es) left behind by the job: ", names);
  }
  for (const Pending& pending : pending_) {  // never followed by training
    log_->write({unix_offset + pending.time, pending.event.kind, pending.event.hosts, pending.event.detail,
                 pending.launch, nullptr, std::nullopt, std::nullopt, std::nullopt, policy_.restarts()});
  }
  pending_.clear();
  record(end, {*exit_code_ == 0 ? "driver_finished" : "driver_gave_up", {}, exit_message_, false});
  if (*exit_code_ == 0) {
    log_info(exit_message_);
  } else {  // one line, as every pstrain program ends on an error
    std::cerr << "pstrain-elastic: error: " << exit_message_ << " (exit " << *exit_code_ << ")" << std::endl;
  }
  return *exit_code_;
}

void Driver::turn() {
  double now = now_seconds();
  handle_signal(now);
  if (exit_code_) return;
  if (!discovery_ && now >= next_discovery_ && signalled_ == 0) {
    discovery_ = std::make_unique<DiscoveryRun>(options_.discovery_script, now, options_.discovery_timeout_s);
  }
  wait_for_input();
  now = now_seconds();
  if (discovery_) poll_discovery(now);
  if (exit_code_) return;
  if (job_) poll_job(now);
  if (exit_code_) return;
  if (job_ && stop_sent_ && now >= stop_deadline_) {
    log_warning("the job did not stop within ", options_.stop_timeout_s, " s (--stop-timeout); ending it");
    terminated_ = job_->terminate(10.0);  // poll_job reads it next turn: a failure, relaunched
  }
  if (signalled_ == 0) apply(now, policy_.on_tick(now));
}

void Driver::wait_for_input() const {
  std::vector<pollfd> fds;
  if (job_ && job_->output_fd() >= 0) fds.push_back({job_->output_fd(), POLLIN, 0});
  if (discovery_ && discovery_->fd() >= 0) fds.push_back({discovery_->fd(), POLLIN, 0});
  ::poll(fds.data(), fds.size(), 100);  // a signal interrupts it; so does output
}

void Driver::poll_discovery(double now) {
  const auto result = discovery_->advance(now);
  if (!result) return;
  discovery_.reset();
  next_discovery_ = now + options_.discovery_interval_s;
  if (result->hosts) {
    apply(now, policy_.on_hosts(now, *result->hosts));
  } else {
    Decision decision = policy_.on_discovery_failure(now, result->error);
    if (decision.action != Action::kGiveUp) log_warning(result->error);  // a give-up says it once, at the end
    apply(now, std::move(decision));
  }
}

void Driver::poll_job(double now) {
  // The exit first, then the output: what mpirun wrote before it exited is still in the pipe and read below.
  const std::optional<ExitStatus> status = job_->running() ? job_->poll_exit() : terminated_;
  std::vector<std::string> lines;
  if (job_->output_fd() >= 0) {
    const bool open = job_reader_.read_from(job_->output_fd(), lines);
    if (!open || status) {
      if (std::string rest = job_reader_.take_rest(); !rest.empty()) lines.push_back(rest);
      job_->close_output();
    }
  }
  for (const std::string& line : lines) {
    if (output_.read_line(line)) training_started(now);
    // The driver asks for a progress line every second (to know how far a job got); the user sees one every 10 s,
    // pstrain's default, unless they chose an interval.
    if (!options_.user_progress_interval && is_progress_line(line)) {
      if (now - last_progress_echo_ < 10) continue;
      last_progress_echo_ = now;
    }
    std::cout << line << '\n';
  }
  std::cout.flush();
  if (!status) return;
  const JobEnd end = classify(*status);
  previous_reached_ = output_.reached();
  job_.reset();
  if (signalled_ > 0) {  // the driver was asked to stop: no relaunch
    finish(end.kind == JobEnd::Kind::kStopped || end.kind == JobEnd::Kind::kFinished ? 0 : status->code,
           end.kind == JobEnd::Kind::kFinished ? "training finished"
           : end.kind == JobEnd::Kind::kStopped
               ? "stopped on a signal after the job wrote a checkpoint; run the same command again to continue"
               : cat("stopped on a signal; the job ended with ", status->describe()));
    return;
  }
  world_.reset();
  apply(now, policy_.on_job_end(now, end));
}

JobEnd Driver::classify(const ExitStatus& status) const {
  JobEnd end;
  end.exit_code = status.code;
  if (status.code == 0) {
    end.kind = output_.finished() || (!output_.stopped_on_signal() && !stop_sent_) ? JobEnd::Kind::kFinished
                                                                                   : JobEnd::Kind::kStopped;
    return end;
  }
  if (status.signal == 0 && status.code >= 2 && status.code <= 5) {
    end.kind = JobEnd::Kind::kVerdict;
    return end;
  }
  end.kind = JobEnd::Kind::kFailed;
  for (const int rank : output_.failed_ranks()) {
    if (world_ && rank >= 0 && rank < world_->ranks()) {
      const std::string& host = world_->rank_hosts[static_cast<std::size_t>(rank)];
      if (std::find(end.failed_hosts.begin(), end.failed_hosts.end(), host) == end.failed_hosts.end()) {
        end.failed_hosts.push_back(host);
      }
    }
  }
  end.detail = output_.failure_detail().empty() ? cat("mpirun ended with ", status.describe())
                                                : cat("mpirun ", status.describe(), ": ", output_.failure_detail());
  return end;
}

void Driver::handle_signal(double now) {
  const int received = signals_received.load();
  if (received == signalled_) return;
  const bool first = signalled_ == 0;
  signalled_ = received;
  const int number = last_signal.load();
  if (first) first_signal_time_ = now;
  // A second signal ends the job at once; one within 2 s of the first is the same request delivered twice
  // (timeout(1) and scancel signal the process and then its whole group).
  if (!job_ || (!first && now - first_signal_time_ >= 2.0)) {
    finish(128 + number, cat("ended on signal ", number));
    return;
  }
  if (!first) return;
  record(now, {"driver_signalled", {}, cat("signal ", number, ": the job checkpoints and stops"), false});
  stop_job(now, cat("the driver received signal ", number));
}

void Driver::apply(double now, Decision decision) {
  for (const Event& event : decision.events) {
    if (event.awaits_training) {
      pending_.push_back({event, now, launches_ + (decision.action == Action::kLaunch ? 1 : 0)});
    } else {
      record(now, event);
    }
  }
  switch (decision.action) {
    case Action::kNone: break;
    case Action::kLaunch: launch(now, *decision.world); break;
    case Action::kStop: stop_job(now, decision.message); break;
    case Action::kFinish: finish(0, decision.message); break;
    case Action::kGiveUp:
      finish(decision.job_exit_code != 0 ? decision.job_exit_code : static_cast<int>(decision.exit_code),
             decision.message);
      break;
  }
}

void Driver::launch(double now, const World& world) {
  ++launches_;
  const std::filesystem::path hostfile = options_.output_dir / "elastic" / cat("launch-", launches_, ".hosts");
  std::filesystem::create_directories(hostfile.parent_path());
  write_file_atomically(hostfile, sequential_hostfile(world, this_host()));
  const auto command = mpirun_command(options_, world, hostfile, forwarded_environment());
  log_info("launch ", launches_, ": ", world.ranks(), " ranks (",
           world.layout ? cat(world.layout->pservers, " server(s) + ", world.layout->trainers, " trainer(s)")
                        : std::string("servers as pstrain's --num-pservers -1 chooses"),
           ") on ", describe(world.hosts));
  world_ = world;
  output_ = JobOutput();
  job_reader_ = LineReader();
  stop_sent_ = false;
  terminated_.reset();
  job_ = std::make_unique<Process>(command, /*capture_output=*/true);
  pending_.push_back({{"launch", {}, cat("launch ", launches_), true}, now, launches_});
}

void Driver::stop_job(double now, const std::string& why) {
  if (!job_ || stop_sent_) return;
  log_info("asking the job to checkpoint and stop: ", why);
  job_->signal(SIGUSR1);  // mpirun forwards it to every rank
  stop_sent_ = true;
  stop_deadline_ = now + options_.stop_timeout_s;
}

void Driver::training_started(double now) {
  if (world_ && !world_->layout) world_->layout = output_.layout();  // the count pstrain chose, for elastic.jsonl
  const auto lost = previous_reached_ && output_.resumed() ? steps_lost(*previous_reached_, output_.resumed()->position)
                                                           : std::optional<std::int64_t>();
  for (const Pending& pending : pending_) {
    // An event's record describes the job that trained after it (its world, checkpoint, cost). A launch whose job
    // failed before training is recorded here too, under its own number, with the time until training resumed.
    const bool earlier_launch = pending.event.kind == "launch" && pending.launch != launches_;
    EventRecord record{unix_offset + pending.time,
                       pending.event.kind,
                       pending.event.hosts,
                       pending.event.detail,
                       pending.event.kind == "launch" ? pending.launch : launches_,
                       world_ && !earlier_launch ? &*world_ : nullptr,
                       earlier_launch ? std::nullopt : output_.resumed(),
                       earlier_launch ? std::nullopt : lost,
                       now - pending.time,
                       policy_.restarts()};
    log_->write(record);
  }
  pending_.clear();
}

void Driver::record(double now, const Event& event, std::optional<double> seconds) {
  log_->write({unix_offset + now, event.kind, event.hosts, event.detail, launches_, world_ ? &*world_ : nullptr,
               std::nullopt, std::nullopt, seconds, policy_.restarts()});
}

void Driver::finish(int code, const std::string& message) {
  if (exit_code_) return;
  exit_code_ = code;
  exit_message_ = message;
}

}  // namespace pstrain::launch
