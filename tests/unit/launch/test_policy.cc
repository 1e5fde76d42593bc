// The policy driven like the driver drives it: a scripted discovery (host lists at given times) and a fake job
// that does what the driver would (runs the world it was given, stops when asked, ends as the script says).
#include <gtest/gtest.h>

#include <algorithm>

#include "launch/policy.h"

namespace pstrain::launch {
namespace {

HostList hosts(const std::string& text) {
  return parse_host_list(text);
}

bool has_event(const Decision& decision, const std::string& kind) {
  return std::any_of(decision.events.begin(), decision.events.end(),
                     [&](const Event& event) { return event.kind == kind; });
}

// The fake job: what runs, what was asked of it, every world launched.
class FakeJob {
 public:
  explicit FakeJob(const Limits& limits) : policy(limits) {}

  Decision discover(double now, const std::string& listed) { return carry_out(policy.on_hosts(now, hosts(listed))); }
  Decision tick(double now) { return carry_out(policy.on_tick(now)); }
  // The stop asked for completes: the job checkpointed and exited 0.
  Decision stops(double now) {
    EXPECT_TRUE(stop_asked) << "the job stopped without being asked";
    return end(now, {JobEnd::Kind::kStopped, 0, {}, ""});
  }
  Decision crashes(double now, std::vector<std::string> failed_hosts) {
    return end(now, {JobEnd::Kind::kFailed, 137, std::move(failed_hosts), "rank killed"});
  }
  Decision end(double now, const JobEnd& how) {
    EXPECT_TRUE(running) << "no job to end";
    running = false;
    stop_asked = false;
    return carry_out(policy.on_job_end(now, how));
  }
  std::string current() const { return running ? describe(launches.back().hosts) : "none"; }

  Policy policy;
  std::vector<World> launches;
  bool running = false;
  bool stop_asked = false;

 private:
  Decision carry_out(Decision decision) {
    if (decision.action == Action::kLaunch) {
      EXPECT_FALSE(running) << "launched over a running job";
      launches.push_back(*decision.world);
      running = true;
    } else if (decision.action == Action::kStop) {
      EXPECT_TRUE(running) << "asked to stop no job";
      stop_asked = true;
    }
    return decision;
  }
};

Limits limits(int min_np, int max_np) {
  Limits out;
  out.min_np = min_np;
  out.max_np = max_np;
  out.max_restarts = 3;
  out.elastic_timeout_s = 100;
  out.cooldown_s = 60;
  return out;
}

TEST(ElasticPolicy, StartsOnTheFirstListAndGrowsWhenAHostIsAdded) {
  FakeJob job(limits(2, 8));
  EXPECT_EQ(job.discover(0, "a:2").action, Action::kLaunch);
  EXPECT_EQ(job.current(), "a:2");
  EXPECT_FALSE(job.launches.back().layout);                 // pstrain chooses the split (--num-pservers -1)
  EXPECT_EQ(job.discover(5, "a:2").action, Action::kNone);  // nothing changed
  const Decision added = job.discover(10, "a:2\nb:2");
  EXPECT_EQ(added.action, Action::kStop);
  ASSERT_TRUE(has_event(added, "hosts_added"));
  EXPECT_TRUE(added.events[0].awaits_training);  // its record waits for the relaunched job's first step
  EXPECT_EQ(job.stops(12).action, Action::kLaunch);
  EXPECT_EQ(job.current(), "a:2,b:2");
  EXPECT_FALSE(job.launches.back().layout);
  EXPECT_EQ(job.launches.back().rank_hosts, (std::vector<std::string>{"a", "b", "a", "b"}));
  EXPECT_EQ(job.policy.restarts(), 0);  // planned changes are no restarts
}

TEST(ElasticPolicy, ShrinksWhenAHostIsRemovedOrLosesSlots) {
  FakeJob job(limits(2, 8));
  job.discover(0, "a:2\nb:2");
  const Decision removed = job.discover(10, "a:2");
  EXPECT_EQ(removed.action, Action::kStop);
  EXPECT_TRUE(has_event(removed, "hosts_removed"));
  job.stops(11);
  EXPECT_EQ(job.current(), "a:2");
  const Decision fewer = job.discover(20, "a:1\nc:3");
  EXPECT_EQ(fewer.action, Action::kStop);
  EXPECT_TRUE(has_event(fewer, "slots_changed"));
  EXPECT_TRUE(has_event(fewer, "hosts_added"));
  job.stops(21);
  EXPECT_EQ(job.current(), "a:1,c:3");
}

TEST(ElasticPolicy, ChangesDuringAStopAreTakenIntoTheRelaunch) {
  FakeJob job(limits(1, 8));
  job.discover(0, "a:2");
  EXPECT_EQ(job.discover(1, "a:2\nb:2").action, Action::kStop);
  EXPECT_EQ(job.discover(2, "a:2\nb:2\nc:2").action, Action::kNone);  // already stopping
  job.stops(3);
  EXPECT_EQ(job.current(), "a:2,b:2,c:2");
  EXPECT_EQ(job.launches.size(), 2u);
}

TEST(ElasticPolicy, ACrashIsRelaunchedAtOnceOnWhatRemains) {
  FakeJob job(limits(2, 8));
  job.discover(0, "a:2\nb:2");
  const Decision crashed = job.crashes(30, {"b"});
  EXPECT_EQ(crashed.action, Action::kLaunch);
  EXPECT_TRUE(has_event(crashed, "job_failed"));
  EXPECT_FALSE(has_event(crashed, "host_cooldown"));  // one failure is not yet a pattern
  EXPECT_EQ(job.current(), "a:2,b:2");
  EXPECT_EQ(job.policy.restarts(), 1);
  // The host went away with the crash: the next list drops it and the job shrinks.
  EXPECT_EQ(job.discover(31, "a:2").action, Action::kStop);
  job.stops(32);
  EXPECT_EQ(job.current(), "a:2");
}

TEST(ElasticPolicy, AHostWhoseRanksFailRepeatedlyCoolsDown) {
  FakeJob job(limits(2, 8));
  job.discover(0, "a:2\nb:2");
  job.crashes(10, {"b"});
  const Decision second = job.crashes(20, {"b"});
  EXPECT_TRUE(has_event(second, "host_cooldown"));
  EXPECT_EQ(job.current(), "a:2");  // b left out although it is listed
  EXPECT_EQ(job.discover(30, "a:2\nb:2").action, Action::kNone);
  EXPECT_EQ(job.tick(79).action, Action::kNone);  // cool-down until 20 + 60
  const Decision back = job.tick(80);
  EXPECT_TRUE(has_event(back, "host_back"));
  EXPECT_EQ(back.action, Action::kStop);
  job.stops(81);
  EXPECT_EQ(job.current(), "a:2,b:2");
}

TEST(ElasticPolicy, TheOnlyCapacityLeftIsNotCooledDown) {
  FakeJob job(limits(2, 8));
  job.discover(0, "a:4");
  job.crashes(10, {"a"});
  const Decision second = job.crashes(20, {"a"});
  EXPECT_TRUE(has_event(second, "host_cooldown_skipped"));
  EXPECT_FALSE(has_event(second, "host_cooldown"));
  EXPECT_EQ(second.action, Action::kLaunch);  // relaunched on it at once; --max-restarts bounds the retries
  EXPECT_EQ(job.current(), "a:4");
}

TEST(ElasticPolicy, AFailureNoRelaunchCanFollowYetIsRecordedWithTheNextTraining) {
  FakeJob job(limits(4, 8));
  job.discover(0, "a:2\nb:2");
  EXPECT_EQ(job.discover(10, "a:2").action, Action::kStop);  // b gone
  const Decision crashed = job.crashes(11, {"b"});           // its ranks died before the checkpoint
  EXPECT_EQ(crashed.action, Action::kNone);                  // 2 < 4: waiting for hosts
  ASSERT_TRUE(has_event(crashed, "job_failed"));
  EXPECT_TRUE(crashed.events[0].awaits_training);  // its cost is known once training resumes
  EXPECT_EQ(job.discover(20, "a:2\nc:2").action, Action::kLaunch);
}

TEST(ElasticPolicy, AFlappingHostCoolsDownAndComesBackAfterIt) {
  FakeJob job(limits(2, 8));
  job.discover(0, "a:2\nb:2");
  job.discover(10, "a:2");  // b gone once: a planned shrink
  job.stops(11);
  job.discover(20, "a:2\nb:2");  // back: grow again
  job.stops(21);
  EXPECT_EQ(job.current(), "a:2,b:2");
  const Decision flapped = job.discover(30, "a:2");  // gone twice within the cool-down: cooled
  EXPECT_TRUE(has_event(flapped, "host_cooldown"));
  job.stops(31);
  EXPECT_EQ(job.discover(40, "a:2\nb:2").action, Action::kNone);  // listed, but cooling: no churn
  EXPECT_EQ(job.current(), "a:2");
  EXPECT_EQ(job.discover(60, "a:2\nb:2").action, Action::kNone);
  EXPECT_EQ(job.tick(89).action, Action::kNone);
  EXPECT_EQ(job.tick(90).action, Action::kStop);  // 30 + 60
  job.stops(91);
  EXPECT_EQ(job.current(), "a:2,b:2");
  // A single removal long after is a plain shrink again.
  EXPECT_FALSE(has_event(job.discover(500, "a:2"), "host_cooldown"));
}

TEST(ElasticPolicy, WaitsForMinNpThenGivesUpAfterTheElasticTimeout) {
  FakeJob job(limits(4, 8));
  const Decision waiting = job.discover(0, "a:2");
  EXPECT_EQ(waiting.action, Action::kNone);
  EXPECT_TRUE(has_event(waiting, "waiting_for_slots"));
  EXPECT_EQ(job.tick(50).action, Action::kNone);
  EXPECT_EQ(job.discover(60, "a:2\nb:1").action, Action::kNone);  // 3 < 4: still waiting, same clock
  const Decision gave_up = job.tick(100);
  EXPECT_EQ(gave_up.action, Action::kGiveUp);
  EXPECT_EQ(gave_up.exit_code, DriverExit::kNotEnoughSlots);
  EXPECT_NE(gave_up.message.find("--min-np 4"), std::string::npos) << gave_up.message;
  EXPECT_TRUE(job.launches.empty());
}

TEST(ElasticPolicy, HostsArrivingWithinTheTimeoutStartTheJob) {
  FakeJob job(limits(4, 8));
  job.discover(0, "a:2");
  EXPECT_EQ(job.discover(99, "a:2\nb:2").action, Action::kLaunch);
  EXPECT_EQ(job.tick(150).action, Action::kNone);  // the wait is over
}

TEST(ElasticPolicy, LosingHostsBelowMinNpStopsTheJobAndWaits) {
  FakeJob job(limits(3, 8));
  job.discover(0, "a:2\nb:2");
  EXPECT_EQ(job.discover(10, "a:2").action, Action::kStop);
  EXPECT_EQ(job.stops(11).action, Action::kNone);
  EXPECT_FALSE(job.running);
  EXPECT_EQ(job.policy.phase(), Phase::kWaiting);
  EXPECT_EQ(job.discover(50, "a:2\nc:1").action, Action::kLaunch);
  EXPECT_EQ(job.current(), "a:2,c:1");
}

TEST(ElasticPolicy, MaxNpCapsTheWorldAndMoreHostsAtTheCapChangeNothing) {
  FakeJob job(limits(2, 4));
  job.discover(0, "a:8");
  EXPECT_EQ(job.current(), "a:4");
  const Decision more = job.discover(10, "a:8\nb:8");
  EXPECT_EQ(more.action, Action::kNone);
  ASSERT_TRUE(has_event(more, "hosts_added"));
  EXPECT_FALSE(more.events[0].awaits_training);                   // recorded at once: no relaunch follows it
  EXPECT_EQ(job.discover(20, "a:3\nb:8").action, Action::kStop);  // a shrank below what the job uses
  job.stops(21);
  EXPECT_EQ(job.current(), "a:3,b:1");
}

TEST(ElasticPolicy, RestartsExhaustedEndTheDriver) {
  FakeJob job(limits(1, 4));  // max_restarts 3
  job.discover(0, "a:2");
  for (int failure = 1; failure <= 3; ++failure) {
    EXPECT_EQ(job.crashes(failure, {}).action, Action::kLaunch) << failure;
  }
  const Decision last = job.crashes(4, {});
  EXPECT_EQ(last.action, Action::kGiveUp);
  EXPECT_EQ(last.exit_code, DriverExit::kRestartsExhausted);
  EXPECT_NE(last.message.find("--max-restarts 3"), std::string::npos) << last.message;
  EXPECT_EQ(job.launches.size(), 4u);
}

TEST(ElasticPolicy, TheJobsOwnVerdictIsPassedThroughNotRetried) {
  FakeJob job(limits(1, 4));
  job.discover(0, "a:2");
  const Decision verdict = job.end(5, {JobEnd::Kind::kVerdict, 3, {}, ""});
  EXPECT_EQ(verdict.action, Action::kGiveUp);
  EXPECT_EQ(verdict.job_exit_code, 3);
  EXPECT_EQ(job.launches.size(), 1u);
}

TEST(ElasticPolicy, FinishedEndsAndAStopNobodyAskedForEndsToo) {
  FakeJob finished(limits(1, 4));
  finished.discover(0, "a:2");
  EXPECT_EQ(finished.end(9, {JobEnd::Kind::kFinished, 0, {}, ""}).action, Action::kFinish);
  FakeJob preempted(limits(1, 4));
  preempted.discover(0, "a:2");
  const Decision stopped = preempted.end(9, {JobEnd::Kind::kStopped, 0, {}, ""});
  EXPECT_EQ(stopped.action, Action::kFinish);
  EXPECT_EQ(preempted.launches.size(), 1u);
}

TEST(ElasticPolicy, DiscoveryFailingAtStartGivesUpLaterKeepsTheLastList) {
  FakeJob fresh(limits(1, 4));
  const Decision at_start = fresh.policy.on_discovery_failure(0, "exit 1");
  EXPECT_EQ(at_start.action, Action::kGiveUp);
  EXPECT_EQ(at_start.exit_code, DriverExit::kDiscoveryFailed);

  FakeJob job(limits(1, 4));
  job.discover(0, "a:2");
  const Decision later = job.policy.on_discovery_failure(5, "timed out");
  EXPECT_EQ(later.action, Action::kNone);
  EXPECT_TRUE(has_event(later, "discovery_failed"));
  EXPECT_TRUE(job.policy.on_discovery_failure(6, "timed out").events.empty());  // once per streak
  EXPECT_TRUE(has_event(job.discover(7, "a:2"), "discovery_recovered"));
  EXPECT_EQ(job.current(), "a:2");
}

}  // namespace
}  // namespace pstrain::launch
