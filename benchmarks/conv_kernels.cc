// The convolutions of the built-in models, one thread: im2col + gemm (OpenBLAS) against the kernel the CPU backend
// chooses (oneDNN's, compute/cpu/onednn_convolution.h), forward and backward (weight, bias and input gradients),
// alternating, medians of --reps timings. Built and run by conv_kernels.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "compute/cpu/cpu_backend.h"

namespace {

using pstrain::compute::ConvGeometry;
using pstrain::compute::CpuBackend;

struct Shape {
  const char* name;
  int batch, height, width, channels, filters;
  bool input_gradient;  // false for a first layer: its input is the data
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

template <typename Step>
double milliseconds(Step step) {
  const auto start = std::chrono::steady_clock::now();
  step();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 2 && std::string(argv[1]) == "--reps" ? std::atoi(argv[2]) : 9;
  const std::vector<Shape> shapes = {{"cnn conv1 (1->32, 28x28)", 64, 28, 28, 1, 32, false},
                                     {"cnn conv2 (32->64, 14x14)", 64, 14, 14, 32, 64, true},
                                     {"cnn conv1 (1->32, 28x28)", 256, 28, 28, 1, 32, false},
                                     {"cnn conv2 (32->64, 14x14)", 256, 14, 14, 32, 64, true},
                                     {"resnet w0.25 (16->32, 28x28)", 64, 28, 28, 16, 32, true},
                                     {"resnet w0.25 (64->64, 7x7)", 64, 7, 7, 64, 64, true}};
  CpuBackend cpu;
  std::mt19937 engine(1);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::printf("| convolution | batch | im2col + gemm ms | chosen kernel ms | speed-up | chosen kernel |\n");
  std::printf("|---|---:|---:|---:|---:|---|\n");
  for (const Shape& s : shapes) {
    ConvGeometry g;
    g.height = s.height;
    g.width = s.width;
    g.channels = s.channels;
    g.kernel = 3;
    g.stride = 1;
    g.padding = 1;
    const std::size_t rows = static_cast<std::size_t>(s.batch) * g.out_height() * g.out_width();
    const int width = g.column_width();
    std::vector<float> x(static_cast<std::size_t>(s.batch) * s.height * s.width * s.channels),
        w(static_cast<std::size_t>(s.filters) * width), b(s.filters), y(rows * s.filters), dy(y.size()), dx(x.size()),
        dw(w.size()), db(b.size()), columns(rows * width);
    for (auto* values : {&x, &w, &b, &dy}) {
      for (float& v : *values) v = unit(engine);
    }
    auto kernel = cpu.make_convolution(g, s.filters, s.batch);
    const auto im2col_step = [&] {  // what nn/layers/conv2d.cc runs without a kernel
      const int m = static_cast<int>(rows);
      cpu.im2col(x.data(), columns.data(), g, s.batch);
      cpu.gemm(false, true, m, s.filters, width, 1.0f, columns.data(), w.data(), 0.0f, y.data());
      cpu.add_row_bias(y.data(), b.data(), m, s.filters);
      cpu.gemm(true, false, s.filters, width, m, 1.0f, dy.data(), columns.data(), 0.0f, dw.data());
      cpu.sum_rows(dy.data(), db.data(), m, s.filters, 0.0f);
      if (!s.input_gradient) return;
      cpu.gemm(false, false, m, width, s.filters, 1.0f, dy.data(), w.data(), 0.0f, columns.data());
      cpu.col2im(columns.data(), dx.data(), g, s.batch);
    };
    const auto kernel_step = [&] {
      kernel->forward(x.data(), w.data(), b.data(), y.data(), s.batch);
      kernel->backward(x.data(), dy.data(), w.data(), dw.data(), db.data(), s.input_gradient ? dx.data() : nullptr,
                       s.batch);
    };
    im2col_step();
    if (kernel) kernel_step();
    std::vector<double> im2col_times, kernel_times;
    for (int rep = 0; rep < reps; ++rep) {
      im2col_times.push_back(milliseconds(im2col_step));
      if (kernel) kernel_times.push_back(milliseconds(kernel_step));
    }
    const double base = median(im2col_times);
    if (kernel) {
      const double chosen = median(kernel_times);
      std::printf("| %s | %d | %.2f | %.2f | %.2fx | %s |\n", s.name, s.batch, base, chosen, base / chosen,
                  kernel->description().c_str());
    } else {
      std::printf("| %s | %d | %.2f | - | - | im2col + gemm (no oneDNN kernel) |\n", s.name, s.batch, base);
    }
  }
}
