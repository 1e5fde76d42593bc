// The backend operations of the layer types beyond dense and convolution, GPU against CPU on random inputs:
// relative error below 1e-4 (all_close), exact where an operation only moves values or draws a mask. Skips
// where there is no GPU.
#include "backend_test_util.h"
#include "core/error.h"
#include "gpu_test_util.h"

namespace pstrain::compute::testing {
namespace {

class GpuLayerOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
    gpu_ = make_gpu_backend(0);
  }

  // Runs `operation` on both backends over uploaded copies of `inputs`, with `outputs` buffers of the given sizes;
  // returns each backend's outputs.
  template <typename Operation>
  std::pair<std::vector<std::vector<float>>, std::vector<std::vector<float>>> both(
      const std::vector<std::vector<float>>& inputs, const std::vector<std::size_t>& outputs, Operation operation) {
    auto run = [&](Backend& backend) {
      std::vector<Buffer<float>> in;
      for (const auto& values : inputs) in.push_back(to_backend(backend, values));
      std::vector<Buffer<float>> out;
      for (const std::size_t size : outputs) out.push_back(to_backend(backend, std::vector<float>(size, 0.25f)));
      operation(backend, in, out);
      std::vector<std::vector<float>> host;
      for (const auto& buffer : out) host.push_back(to_host(backend, buffer));
      return host;
    };
    return {run(*gpu_), run(*cpu_)};
  }

  std::unique_ptr<Backend> cpu_ = make_cpu_backend();
  std::unique_ptr<Backend> gpu_;
};

TEST_F(GpuLayerOpsTest, CopyAxpyAddMultiplyAndColumnBlocks) {
  const auto a = random_floats(100003, 1), b = random_floats(100003, 2);
  const auto [gpu, cpu] =
      both({a, b}, {a.size(), a.size(), a.size(), 2 * a.size(), a.size()}, [](Backend& be, auto& in, auto& out) {
        be.copy(out[0].data(), in[0].data(), in[0].size() * sizeof(float));
        be.copy(out[1].data(), in[1].data(), in[1].size() * sizeof(float));
        be.axpy(-0.5f, in[0].data(), out[1].data(), in[0].size());
        be.multiply(in[0].data(), in[1].data(), out[2].data(), in[0].size());
        be.copy_columns(in[0].data(), 7, out[3].data() + 3, 14, 100003 / 7, 5);
        be.add(in[0].data(), in[1].data(), out[4].data(), in[0].size());
      });
  EXPECT_EQ(gpu[0], cpu[0]);
  EXPECT_TRUE(all_close(gpu[1], cpu[1]));
  EXPECT_EQ(gpu[2], cpu[2]);
  EXPECT_EQ(gpu[3], cpu[3]);
  EXPECT_EQ(gpu[4], cpu[4]);
}

TEST_F(GpuLayerOpsTest, AveragePoolingAndSpatialMean) {
  for (const PoolGeometry g : {PoolGeometry{.height = 28, .width = 28, .channels = 32, .window = 2, .stride = 2},
                               PoolGeometry{.height = 7, .width = 9, .channels = 3, .window = 3, .stride = 1}}) {
    const int batch = 5;
    const std::size_t in_size = static_cast<std::size_t>(batch) * g.height * g.width * g.channels;
    const std::size_t out_size = static_cast<std::size_t>(batch) * g.out_height() * g.out_width() * g.channels;
    const auto x = random_floats(in_size, 3), dy = random_floats(out_size, 4);
    const auto [gpu, cpu] = both({x, dy}, {out_size, in_size}, [&](Backend& be, auto& in, auto& out) {
      be.avg_pool_forward(in[0].data(), out[0].data(), g, batch);
      be.avg_pool_backward(in[1].data(), out[1].data(), g, batch);
    });
    EXPECT_TRUE(all_close(gpu[0], cpu[0]));
    EXPECT_TRUE(all_close(gpu[1], cpu[1]));
  }
  const int batch = 6, pixels = 49, channels = 64;
  const auto x = random_floats(static_cast<std::size_t>(batch) * pixels * channels, 5);
  const auto dy = random_floats(static_cast<std::size_t>(batch) * channels, 6);
  const auto [gpu, cpu] = both({x, dy}, {dy.size(), x.size()}, [&](Backend& be, auto& in, auto& out) {
    be.spatial_mean(in[0].data(), out[0].data(), batch, pixels, channels);
    be.spatial_mean_backward(in[1].data(), out[1].data(), batch, pixels, channels);
  });
  EXPECT_TRUE(all_close(gpu[0], cpu[0]));
  EXPECT_TRUE(all_close(gpu[1], cpu[1]));
}

TEST_F(GpuLayerOpsTest, BatchNormTrainingInferenceAndBackward) {
  for (const auto& [rows, channels] : {std::pair{64 * 196, 32}, std::pair{7, 5}, std::pair{1000, 300}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(channels));
    const std::size_t c = static_cast<std::size_t>(channels);
    const auto x = random_floats(static_cast<std::size_t>(rows) * c, 7, -2.0f, 5.0f);
    const auto dy = random_floats(x.size(), 8);
    const auto gamma = random_floats(c, 9, 0.5f, 1.5f), beta = random_floats(c, 10);
    const auto running_mean = random_floats(c, 11), running_var = random_floats(c, 12, 0.5f, 2.0f);
    const auto [gpu, cpu] = both({x, dy, gamma, beta}, {x.size(), x.size(), x.size(), c, c, c, c, c, c},
                                 [&](Backend& be, auto& in, auto& out) {
                                   be.copy_from_host(out[3].data(), running_mean.data(), c * sizeof(float));
                                   be.copy_from_host(out[4].data(), running_var.data(), c * sizeof(float));
                                   const Backend::BatchNormTensors t{in[2].data(),  in[3].data(),  out[3].data(),
                                                                     out[4].data(), out[5].data(), out[6].data()};
                                   be.batch_norm_training(in[0].data(), out[0].data(), t, 0.1f, 1e-5f, rows, channels);
                                   be.batch_norm_backward(in[0].data(), in[1].data(), t, out[1].data(), out[7].data(),
                                                          out[8].data(), rows, channels);
                                   be.batch_norm_inference(in[0].data(), out[2].data(), t, 1e-5f, rows, channels);
                                 });
    for (std::size_t i = 0; i < gpu.size(); ++i) EXPECT_TRUE(all_close(gpu[i], cpu[i])) << "output " << i;
  }
}

TEST_F(GpuLayerOpsTest, DropoutMasksAreTheCpusBitForBit) {
  const auto [gpu, cpu] = both({}, {1000003, 17}, [](Backend& be, auto&, auto& out) {
    be.dropout_mask(out[0].data(), out[0].size(), 0.3f, 12345);
    be.dropout_mask(out[1].data(), out[1].size(), 0.9f, 6789);
  });
  EXPECT_EQ(gpu, cpu);
}

TEST_F(GpuLayerOpsTest, EmbeddingGatherAndScatter) {
  const int vocab = 1000, dim = 48, count = 4096;
  const auto table = random_floats(static_cast<std::size_t>(vocab) * dim, 13);
  std::vector<float> ids(count);
  for (int i = 0; i < count; ++i) ids[i] = static_cast<float>((i * 37 + i / 3) % vocab);
  const auto dy = random_floats(static_cast<std::size_t>(count) * dim, 14);
  const auto [gpu, cpu] = both({table, ids, dy}, {dy.size(), table.size()}, [&](Backend& be, auto& in, auto& out) {
    be.gather_rows(in[0].data(), in[1].data(), out[0].data(), count, dim, vocab);
    be.scatter_add_rows(in[2].data(), in[1].data(), out[1].data(), count, dim, vocab);
  });
  EXPECT_EQ(gpu[0], cpu[0]);
  EXPECT_EQ(gpu[1], cpu[1]);  // the same sums in the same order
  auto table_buffer = to_backend(*gpu_, table);
  auto bad = to_backend(*gpu_, std::vector<float>{3.0f, 1000.0f});
  Buffer<float> out(*gpu_, 2 * dim);
  EXPECT_THROW(gpu_->gather_rows(table_buffer.data(), bad.data(), out.data(), 2, dim, vocab), Error);
}

TEST_F(GpuLayerOpsTest, SoftmaxCrossEntropyWithLabelSmoothing) {
  const int rows = 100, classes = 10;
  const auto logits = random_floats(static_cast<std::size_t>(rows) * classes, 15, -5.0f, 5.0f);
  std::vector<std::int32_t> labels(rows);
  for (int r = 0; r < rows; ++r) labels[r] = (r * 3) % classes;
  auto run = [&](Backend& backend, std::vector<float>& dlogits) {
    auto logits_buffer = to_backend(backend, logits);
    auto labels_buffer = to_backend(backend, labels);
    Buffer<float> dlogits_buffer(backend, logits.size());
    const auto result = backend.softmax_cross_entropy(logits_buffer.data(), labels_buffer.data(), dlogits_buffer.data(),
                                                      rows, classes, 0.1f);
    dlogits = to_host(backend, dlogits_buffer);
    return result;
  };
  std::vector<float> gpu_dlogits, cpu_dlogits;
  const auto gpu = run(*gpu_, gpu_dlogits);
  const auto cpu = run(*cpu_, cpu_dlogits);
  EXPECT_TRUE(relative_close(gpu.loss_sum, cpu.loss_sum));
  EXPECT_EQ(gpu.correct, cpu.correct);
  EXPECT_TRUE(all_close(gpu_dlogits, cpu_dlogits));
}

}  // namespace
}  // namespace pstrain::compute::testing
