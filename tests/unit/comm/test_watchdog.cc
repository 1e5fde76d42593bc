// The watchdog thread against the main thread: heartbeats written while Wait guards come and go (run under
// ThreadSanitizer by tests/sanitize/run.sh), and the expiry that ends a stuck rank with ExitCode::kTimeout.
#include "comm/watchdog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/error.h"

namespace pstrain::comm {
namespace {

namespace fs = std::filesystem;

class WatchdogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pstrain-watchdog-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "node_0");
  }
  void TearDown() override {
    Watchdog::stop();
    fs::remove_all(dir_);
  }

  std::string heartbeat() const {
    std::ifstream in(dir_ / "node_0" / "heartbeat");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Polls the heartbeat file (rewritten every 0.5 s by the watchdog thread) until it contains `needle`;
  // the deadline only bounds a failing test.
  bool heartbeat_shows(const std::string& needle) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (heartbeat().find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  fs::path dir_;
};

TEST_F(WatchdogTest, HeartbeatFollowsTheWaitGuards) {
  Watchdog::start(0, 1, 600, dir_);
  EXPECT_TRUE(heartbeat_shows("working")) << heartbeat();
  {
    const Watchdog::Wait wait("the test barrier");
    EXPECT_TRUE(heartbeat_shows("waiting the test barrier")) << heartbeat();
  }
  EXPECT_TRUE(heartbeat_shows("working working")) << heartbeat();
}

TEST_F(WatchdogTest, ManyShortWaitsWhileTheThreadWrites) {
  // The main thread arms and disarms guards as fast as it can while the watchdog thread reads them: the
  // pattern of every training step. ThreadSanitizer checks the hand-over; here only the outcome is checked.
  Watchdog::start(0, 1, 600, dir_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1200);
  long waits = 0;
  while (std::chrono::steady_clock::now() < until) {
    const Watchdog::Wait wait("a step");
    ++waits;
  }
  EXPECT_GT(waits, 0);
  EXPECT_TRUE(heartbeat_shows("working working")) << heartbeat();
}

TEST_F(WatchdogTest, ClosingAnInnerWaitHandsTheWatchBackToTheOuterOne) {
  // A checkpoint joined inside the async end-of-pass meeting: the heartbeat names the innermost wait, then the
  // meeting again once the checkpoint is over, and only the outermost guard's end makes the rank "working".
  Watchdog::start(0, 1, 600, dir_);
  {
    const Watchdog::Wait meeting("the meeting");
    EXPECT_TRUE(heartbeat_shows("waiting the meeting")) << heartbeat();
    {
      const Watchdog::Wait checkpoint("the checkpoint");
      EXPECT_TRUE(heartbeat_shows("waiting the checkpoint")) << heartbeat();
      {
        const Watchdog::Wait gather("the gather");
        EXPECT_TRUE(heartbeat_shows("waiting the gather")) << heartbeat();
      }
      EXPECT_TRUE(heartbeat_shows("waiting the checkpoint")) << heartbeat();
    }
    EXPECT_TRUE(heartbeat_shows("waiting the meeting")) << heartbeat();
  }
  EXPECT_TRUE(heartbeat_shows("working working")) << heartbeat();
}

TEST_F(WatchdogTest, StopAndStartAgain) {
  for (int round = 0; round < 3; ++round) {
    Watchdog::start(0, 1, 600, dir_);
    const Watchdog::Wait wait("a restart");
    Watchdog::stop();
  }
  SUCCEED();
}

TEST_F(WatchdogTest, WaitWithoutWatchdogDoesNothing) {
  const Watchdog::Wait wait("no watchdog yet");
  EXPECT_FALSE(fs::exists(dir_ / "node_0" / "heartbeat"));
}

using WatchdogDeathTest = WatchdogTest;

TEST_F(WatchdogDeathTest, StuckWaitEndsTheProcessNamingTheSilentRank) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog::start(0, 2, 0.5, dir_);
        const Watchdog::Wait wait("the stuck barrier");
        for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the stuck rank itself
      },
      ::testing::ExitedWithCode(static_cast<int>(ExitCode::kTimeout)),
      "rank 0 waited .* in the stuck barrier; rank\\(s\\) that stopped responding: 1 \\(no heartbeat\\)");
}

TEST_F(WatchdogDeathTest, OuterWaitStillExpiresAfterAnInnerWaitClosed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Watchdog::start(0, 2, 0.5, dir_);
        const Watchdog::Wait meeting("the outer meeting");
        { const Watchdog::Wait checkpoint("a checkpoint inside it"); }
        // Stuck in the outer wait. Bounded, so that an unguarded wait fails the test (exit 0) instead of hanging it.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(static_cast<int>(ExitCode::kTimeout)),
      "rank 0 waited .* in the outer meeting; rank\\(s\\) that stopped responding: 1 \\(no heartbeat\\)");
}

}  // namespace
}  // namespace pstrain::comm
