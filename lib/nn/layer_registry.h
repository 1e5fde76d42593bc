#pragma once
// The layer types a model description can name. Each lives in its own file under lib/nn/layers/ and registers
// itself there through a function `void register_<file name>(LayerRegistry&)`: lib/nn/CMakeLists.txt finds the
// files and generates the list of those functions, so adding a layer type means adding its file (and its
// kernels), nothing else.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"  // cat() and Error, for the layer files
#include "nn/layer.h"
#include "nn/layer_attributes.h"

namespace pstrain::nn {

struct LayerType {
  std::string name;
  std::string summary;  // one line for --describe-model and for errors listing the known types
  std::size_t min_inputs = 1;
  std::size_t max_inputs = 1;
  // The output is the input's memory seen with another shape (flatten): the graph gives the node no buffer of
  // its own and skips its forward, so a reshape costs nothing. Its backward still runs (a copy of the gradient).
  bool reshapes_only = false;
  // Every input's gradient is the node's output gradient, element for element (add, a reshape). An input that
  // this node alone reads then reads its gradient straight from the node's buffer, and the node's backward gets
  // a null pointer for it, so no copy is made (a copy the size of the output, per input and step).
  bool gradient_passes_through = false;
  // Reads the node's attributes and checks its input shapes; throws through attributes.fail() naming the
  // problem ("needs an image input, got 784").
  std::function<LayerPlan(LayerAttributes& attributes, const std::vector<Shape>& inputs)> plan;
  // Creates the layer over a backend; the attributes are those plan() accepted.
  std::function<std::unique_ptr<Layer>(const LayerBuild& build, LayerAttributes& attributes)> create;
};

class LayerRegistry {
 public:
  void add(LayerType type);
  const LayerType* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, LayerType> types_;
};

// Every registered type, built once.
const LayerRegistry& layer_registry();

}  // namespace pstrain::nn
