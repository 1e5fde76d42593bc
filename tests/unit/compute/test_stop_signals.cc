// A stop signal (SIGTERM / SIGUSR1: Slurm, Kubernetes, the elastic driver) arriving while oneDNN's JIT sgemm runs.
// oneDNN 2.x's kernels point the stack pointer into a heap workspace, so a signal handled on the computing thread
// writes its frame into the heap: glibc then aborts ("corrupted size vs. prev_size") and this test fails by
// crashing. With the listener (core/stop_signals.h) the computing thread never takes the signals.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "backend_test_util.h"
#include "compute/cpu/onednn_gemm.h"
#include "core/stop_signals.h"

namespace pstrain::compute::testing {
namespace {

// In a process of its own (the death-test child re-executes this binary): the listener must come before the
// first parallel oneDNN call, whose worker threads inherit the signal mask, as it does in pstrain's main.
void compute_under_stop_signals() {
  constexpr int m = 128, n = 256, k = 200;  // a product pstrain gives oneDNN (few terms, many elements)
  const StopSignalListener listener;
  const auto backend = make_cpu_backend();
  const auto a = random_floats(static_cast<std::size_t>(m) * k, 1);
  const auto b = random_floats(static_cast<std::size_t>(k) * n, 2);
  std::vector<float> reference(static_cast<std::size_t>(m) * n);
  backend->gemm(false, false, m, n, k, 1.0f, a.data(), b.data(), 0.0f, reference.data());
  std::atomic<bool> done{false};
  std::atomic<int> sent{0};
  std::thread sender([&] {  // process-directed, as mpirun, Slurm and the kubelet send them
    while (!done.load()) {
      kill(getpid(), (sent.fetch_add(1) % 2) == 0 ? SIGUSR1 : SIGTERM);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  int differing = 0;
  std::vector<float> product(reference.size());
  for (int i = 0; i < 1500; ++i) {
    std::vector<float> moving(1000 + static_cast<std::size_t>(i) * 37);  // keeps the heap's free chunks changing
    backend->gemm(false, false, m, n, k, 1.0f, a.data(), b.data(), 0.0f, product.data());
    differing += std::memcmp(product.data(), reference.data(), product.size() * sizeof(float)) != 0 ? 1 : 0;
    moving[i % moving.size()] = product[0];
  }
  done.store(true);
  sender.join();
  if (sent.load() < 100) std::_Exit(2);  // too few signals to have tested anything
  if (!stop_signal_received()) std::_Exit(3);
  std::_Exit(differing == 0 ? 0 : 4);
}

TEST(StopSignals, ArrivingDuringOneDnnGemmsLeaveTheHeapAndTheProductsIntact) {
  if (!prefers_onednn_sgemm(128, 256, 200)) GTEST_SKIP() << "built without oneDNN";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // Exit 0: every product equal to the one before the signals; a corrupted heap ends in SIGABRT instead.
  EXPECT_EXIT(compute_under_stop_signals(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace pstrain::compute::testing
