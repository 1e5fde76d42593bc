// Memory, fill and the two row-wise helpers used by dense layers.
#include <cstdint>

#include "backend_test_util.h"
#include "compute/cpu/cpu_backend.h"

namespace pstrain::compute::testing {
namespace {

TEST_F(BackendTest, CpuBuffersAreCacheLineAligned) {
  for (std::size_t count : {1, 3, 17, 1000}) {
    Buffer<float> buffer(*backend_, count);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % CpuBackend::kAlignment, 0u) << count;
  }
  EXPECT_EQ(backend_->name(), "cpu");
}

TEST_F(BackendTest, BufferMovesOwnership) {
  Buffer<float> first(*backend_, 4);
  float* pointer = first.data();
  Buffer<float> second = std::move(first);
  EXPECT_EQ(second.data(), pointer);
  EXPECT_EQ(second.size(), 4u);
  EXPECT_EQ(first.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
}

TEST_F(BackendTest, CopiesRoundTripAndFillSetsEveryElement) {
  const std::vector<float> values{1.5f, -2.0f, 3.25f};
  auto buffer = to_backend(*backend_, values);
  EXPECT_EQ(to_host(*backend_, buffer), values);
  backend_->fill(buffer.data(), buffer.size(), 7.0f);
  EXPECT_EQ(to_host(*backend_, buffer), std::vector<float>(3, 7.0f));

  const std::vector<std::int32_t> labels{0, 9, 4};
  auto label_buffer = to_backend(*backend_, labels);
  EXPECT_EQ(to_host(*backend_, label_buffer), labels);
}

TEST_F(BackendTest, AddRowBiasAddsToEveryRow) {
  auto y = to_backend(*backend_, std::vector<float>{1, 2, 3, 4, 5, 6});
  auto bias = to_backend(*backend_, std::vector<float>{10, 20, 30});
  backend_->add_row_bias(y.data(), bias.data(), 2, 3);
  EXPECT_EQ(to_host(*backend_, y), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST_F(BackendTest, SumRowsOverwritesOrAccumulatesWithBeta) {
  auto x = to_backend(*backend_, std::vector<float>{1, 2, 3, 4, 5, 6});
  auto out = to_backend(*backend_, std::vector<float>{std::numeric_limits<float>::quiet_NaN(), 100});
  backend_->sum_rows(x.data(), out.data(), 3, 2, 0.0f);  // beta 0 ignores what was there, NaN included
  EXPECT_EQ(to_host(*backend_, out), (std::vector<float>{9, 12}));
  backend_->sum_rows(x.data(), out.data(), 3, 2, 0.5f);
  EXPECT_EQ(to_host(*backend_, out), (std::vector<float>{13.5f, 18}));
}

}  // namespace
}  // namespace pstrain::compute::testing
