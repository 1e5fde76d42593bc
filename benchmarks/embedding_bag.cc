// embedding_bag forward + backward on one thread, DLRM-sized: batch 512, 26 categorical fields of one id each,
// dim 16, 2^18 rows, either a table per field (26 layers) or one table the fields share (one layer). Backward's
// share that only zeroes the dense gradient buffer (rows x dim floats per table) is timed apart: it is what a
// sparse gradient would save. Medians of --reps steps. Built and run by embedding_bag.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "nn/layer_registry.h"

namespace {

using pstrain::nn::Layer;
using pstrain::nn::LayerAttributes;
using pstrain::nn::LayerBuild;
using pstrain::nn::StepContext;

constexpr int kBatch = 512;
constexpr std::size_t kFields = 26, kDim = 16, kRows = 1 << 18;

struct Table {
  std::vector<float> values, gradients, output, output_gradient;
  std::unique_ptr<Layer> layer;
};

Table make_table(pstrain::compute::Backend& backend, const std::map<std::string, std::string>& attributes) {
  const auto& type = *pstrain::nn::layer_registry().find("embedding_bag");
  LayerAttributes plan_attributes(attributes, "bench: ");
  LayerBuild build{.backend = backend,
                   .inputs = {},
                   .plan = type.plan(plan_attributes, {}),
                   .parameters = {},
                   .state = {},
                   .max_batch = kBatch};
  Table table;
  table.values.assign(kRows * kDim, 0.01f);
  table.gradients.assign(kRows * kDim, 0.0f);
  const std::size_t width = pstrain::nn::element_count(build.plan.output);
  table.output.assign(kBatch * width, 0.0f);
  table.output_gradient.assign(kBatch * width, 0.001f);
  build.parameters.push_back({table.values.data(), table.gradients.data(), 0});
  LayerAttributes create_attributes(attributes, "bench: ");
  table.layer = type.create(build, create_attributes);
  return table;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run(const char* name, std::vector<Table>& tables, const StepContext& step, int reps) {
  std::vector<double> forward, backward, zeroing;
  for (int rep = 0; rep < reps; ++rep) {
    auto start = std::chrono::steady_clock::now();
    for (Table& t : tables) t.layer->forward(step, {}, t.output.data());
    forward.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    for (Table& t : tables) t.layer->backward(step, {}, t.output.data(), t.output_gradient.data(), {});
    backward.push_back(seconds_since(start));
    start = std::chrono::steady_clock::now();
    for (Table& t : tables) std::fill(t.gradients.begin(), t.gradients.end(), 0.0f);
    zeroing.push_back(seconds_since(start));
  }
  const double f = median(forward), b = median(backward), z = median(zeroing);
  std::printf("| %s | %.3f | %.3f | %.3f | %.0f | %.0f |\n", name, f * 1e3, b * 1e3, z * 1e3, kBatch / (f + b),
              kBatch / (f + b - z));
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 2 && std::string(argv[1]) == "--reps" ? std::atoi(argv[2]) : 21;
  auto backend = pstrain::compute::make_cpu_backend();
  pstrain::core::JaggedIds ids;
  ids.fields = kFields;
  ids.samples = kBatch;
  std::mt19937_64 engine(1);
  ids.offsets.push_back(0);
  for (std::size_t i = 0; i < kFields * kBatch; ++i) {
    ids.values.push_back(engine());
    ids.offsets.push_back(ids.values.size());
  }
  const StepContext step{.batch = kBatch, .training = true, .categorical = &ids};
  std::printf(
      "| tables | forward ms | backward ms | of which zeroing the dense gradient ms | samples/s |"
      " samples/s without the zeroing |\n|---|---|---|---|---|---|\n");
  std::vector<Table> own;
  for (std::size_t f = 0; f < kFields; ++f) {
    own.push_back(
        make_table(*backend,
                   {{"field", std::to_string(f)}, {"rows", std::to_string(kRows)}, {"dim", std::to_string(kDim)}}));
  }
  run("26 tables of 2^18 x 16", own, step, reps);
  own.clear();
  std::vector<Table> shared;
  shared.push_back(
      make_table(*backend, {{"fields", "0-25"}, {"rows", std::to_string(kRows)}, {"dim", std::to_string(kDim)}}));
  run("1 shared table of 2^18 x 16", shared, step, reps);
}
