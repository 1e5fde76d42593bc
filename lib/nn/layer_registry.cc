#include "nn/layer_registry.h"

#include "core/error.h"

// One declaration per file in lib/nn/layers/, from the list CMake generates (layer_files.inc).
#define PSTRAIN_LAYER_FILE(file) void register_##file(LayerRegistry& registry);
namespace pstrain::nn {
#include "layer_files.inc"
}  // namespace pstrain::nn
#undef PSTRAIN_LAYER_FILE

namespace pstrain::nn {

void LayerRegistry::add(LayerType type) {
  PSTRAIN_ASSERT(type.plan && type.create, "layer type ", type.name, " lacks plan or create");
  const std::string name = type.name;
  PSTRAIN_ASSERT(types_.emplace(name, std::move(type)).second, "layer type ", name, " registered twice");
}

const LayerType* LayerRegistry::find(const std::string& name) const {
  const auto found = types_.find(name);
  return found == types_.end() ? nullptr : &found->second;
}

std::vector<std::string> LayerRegistry::names() const {
  std::vector<std::string> names;
  for (const auto& [name, type] : types_) names.push_back(name);
  return names;
}

const LayerRegistry& layer_registry() {
  static const LayerRegistry registry = [] {
    LayerRegistry built;
#define PSTRAIN_LAYER_FILE(file) register_##file(built);
#include "layer_files.inc"
#undef PSTRAIN_LAYER_FILE
    return built;
  }();
  return registry;
}

}  // namespace pstrain::nn
