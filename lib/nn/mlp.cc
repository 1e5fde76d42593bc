// The multi-layer perceptron: fc1..fcN Dense layers on the input, the spec's activation after every hidden
// layer, softmax cross-entropy on the last. Parameters are laid out as fc1.weight, fc1.bias, fc2.weight, ...;
// FlatModel owns them and the training step.
#include "nn/dense_stack.h"
#include "nn/flat_model.h"
#include "nn/mlp_layout.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

class Mlp final : public FlatModel {
 public:
  Mlp(compute::Backend& backend, const MlpSpec& spec)
      : FlatModel(backend, dense_parameter_layout(mlp_layer_widths(spec)), spec.input_size, spec.num_classes,
                  spec.max_batch),
        dense_(backend, mlp_layer_widths(spec), layer_views(0, layer_count()), spec.activation, spec.max_batch) {}

 private:
  const float* forward(int rows) override { return dense_.forward(input(), rows); }
  float* logits_gradient() override { return dense_.logits_gradient(); }
  void backward(int rows) override { dense_.backward(input(), nullptr, rows); }

  float weight_limit(std::size_t layer) const override { return dense_.weight_limit(layer); }

  DenseStack dense_;
};

}  // namespace

std::unique_ptr<Model> make_mlp(compute::Backend& backend, const MlpSpec& spec) {
  validate_mlp_spec(spec);
  return std::make_unique<Mlp>(backend, spec);
}

}  // namespace pstrain::nn
