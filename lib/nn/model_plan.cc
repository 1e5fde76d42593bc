#include "nn/model_plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <span>
#include <sstream>

#include "core/error.h"
#include "nn/initialization.h"

namespace pstrain::nn {

namespace {

[[noreturn]] void fail(const ModelSpec& spec, const NodeSpec& node, const std::string& problem) {
  throw Error(ExitCode::kUsage, spec.where(node) + problem);
}

// Evaluation order: file order wherever the inputs allow it (Kahn's algorithm taking the earliest ready line).
// Throws naming an unknown input or a cycle.
std::vector<std::size_t> evaluation_order(const ModelSpec& spec) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) index[spec.nodes[i].name] = i;
  std::vector<std::vector<std::size_t>> readers(spec.nodes.size());
  std::vector<std::size_t> waiting(spec.nodes.size(), 0);
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    for (const std::string& input : spec.nodes[i].inputs) {
      if (input == "input") continue;
      const auto found = index.find(input);
      if (found == index.end()) fail(spec, spec.nodes[i], cat("input '", input, "' names no layer"));
      if (found->second == i) fail(spec, spec.nodes[i], "a layer cannot read itself (a cycle)");
      readers[found->second].push_back(i);
      ++waiting[i];
    }
  }
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    if (waiting[i] == 0) ready.insert(i);
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t next = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(next);
    for (const std::size_t reader : readers[next]) {
      if (--waiting[reader] == 0) ready.insert(reader);
    }
  }
  if (order.size() != spec.nodes.size()) {
    std::string members;
    for (std::size_t i = 0; i < waiting.size(); ++i) {
      if (waiting[i] > 0) members += (members.empty() ? "" : ", ") + spec.nodes[i].name;
    }
    const auto first = std::find_if(waiting.begin(), waiting.end(), [](std::size_t w) { return w > 0; });
    fail(spec, spec.nodes[static_cast<std::size_t>(first - waiting.begin())],
         cat("the inputs of layers ", members, " form a cycle"));
  }
  return order;
}

void add_tensors(ModelPlan& model, const PlannedNode& node, const std::vector<TensorSpec>& tensors, bool trainable,
                 std::vector<std::size_t>& indices) {
  auto& layout = trainable ? model.parameters : model.state;
  auto& init = trainable ? model.parameter_init : model.state_init;
  std::size_t& count = trainable ? model.parameter_count : model.state_count;
  for (const TensorSpec& tensor : tensors) {
    indices.push_back(layout.size());
    layout.push_back(
        {node.spec.name + "." + tensor.name, tensor.shape, count, element_count(tensor.shape), tensor.row_table});
    init.push_back(tensor.init);
    count += layout.back().size;
  }
}

PlannedNode plan_node(const ModelPlan& model, const NodeSpec& spec, const std::map<std::string, int>& position) {
  PlannedNode node;
  node.spec = spec;
  node.type = layer_registry().find(spec.type);
  if (node.type == nullptr) {
    std::string known;
    for (const std::string& name : layer_registry().names()) known += (known.empty() ? "" : ", ") + name;
    fail(model.spec, spec, cat("unknown layer type '", spec.type, "' (known: ", known, ")"));
  }
  for (const std::string& input : spec.inputs) {
    const int index = input == "input" ? ModelPlan::kDataInput : position.at(input);
    node.inputs.push_back(index);
    node.input_shapes.push_back(
        index == ModelPlan::kDataInput ? model.input : model.nodes[static_cast<std::size_t>(index)].plan.output);
    if (index != ModelPlan::kDataInput && model.nodes[static_cast<std::size_t>(index)].needs_gradient) {
      node.needs_gradient = true;
    }
  }
  const std::size_t count = spec.inputs.size();
  if (count < node.type->min_inputs || count > node.type->max_inputs) {
    fail(model.spec, spec,
         cat("layer ", spec.name, " (", spec.type, ") takes ",
             node.type->min_inputs == node.type->max_inputs ? "" : "at least ", node.type->min_inputs,
             " input(s), got ", count, node.type->min_inputs > 1 ? " (name them with inputs=A,B)" : ""));
  }
  LayerAttributes attributes(spec.attributes,
                             model.spec.where(spec) + cat("layer ", spec.name, " (", spec.type, "): "));
  node.plan = node.type->plan(attributes, node.input_shapes);
  attributes.check_all_used();
  if (element_count(node.plan.output) == 0) fail(model.spec, spec, cat("layer ", spec.name, " has an empty output"));
  if (!node.plan.parameters.empty()) node.needs_gradient = true;
  return node;
}

// Every layer must lead to the output: a layer whose result nothing reads is a mistake in the description.
void check_all_used(const ModelPlan& model) {
  std::vector<bool> used(model.nodes.size(), false);
  used.back() = true;
  for (std::size_t i = model.nodes.size(); i-- > 0;) {
    if (!used[i])
      fail(model.spec, model.nodes[i].spec,
           cat("the output of layer ", model.nodes[i].spec.name,
               " is never used (the model's output is the last line)"));
    for (const int input : model.nodes[i].inputs) {
      if (input != ModelPlan::kDataInput) used[static_cast<std::size_t>(input)] = true;
    }
  }
}

// A layer that reads no layer (embedding_bag) does not read the line above either; naming inputs for it is a
// mistake in the description.
void drop_default_inputs(ModelSpec& spec) {
  for (NodeSpec& node : spec.nodes) {
    const LayerType* type = layer_registry().find(node.type);
    if (type == nullptr || type->max_inputs > 0) continue;
    if (node.inputs_named) {
      const std::string problem = "reads no layer (its input is the batch's categorical fields): remove inputs=";
      fail(spec, node, cat("layer ", node.name, " (", node.type, ") ", problem));
    }
    node.inputs.clear();
  }
}

// The last line's loss= (softmax by default) and the output shape it needs.
void plan_loss(ModelPlan& model) {
  for (std::size_t i = 0; i + 1 < model.spec.nodes.size(); ++i) {
    if (!model.spec.nodes[i].loss.empty()) {
      fail(model.spec, model.spec.nodes[i], "loss= belongs on the last line (the model's output)");
    }
  }
  const NodeSpec& last = model.spec.nodes.back();
  try {
    model.loss = last.loss.empty() ? LossKind::kSoftmaxCrossEntropy : parse_loss(last.loss);
  } catch (const Error& error) {
    fail(model.spec, last, error.what());
  }
  const PlannedNode& output = model.nodes.back();
  if (model.loss == LossKind::kBinaryCrossEntropy) {
    if (model.classes != 2) {
      fail(model.spec, last, cat("loss=bce needs data of 2 classes (labels 0 and 1); the data have ", model.classes));
    }
    if (output.plan.output != Shape{1}) {
      fail(model.spec, output.spec,
           cat("the model's output (layer ", output.spec.name, ") has shape ", to_string(output.plan.output),
               "; loss=bce reads one logit per sample, so it must be 1 (end with a dense layer of units=1)"));
    }
    return;
  }
  if (output.plan.output != Shape{model.classes}) {
    fail(model.spec, output.spec,
         cat("the model's output (layer ", output.spec.name, ") has shape ", to_string(output.plan.output),
             "; the data have ", model.classes, " classes, so it must be ", model.classes,
             " (end with a dense layer of units=", model.classes, ")"));
  }
}

}  // namespace

Shape model_input_shape(const std::vector<std::size_t>& data_sample_shape) {
  if (data_sample_shape.empty()) return {1};
  Shape shape;
  shape.reserve(data_sample_shape.size() + 1);
  shape.assign(data_sample_shape.begin(), data_sample_shape.end());
  if (shape.size() == 2) shape.push_back(1);  // an image without a channel axis: one channel
  return shape;
}

ModelPlan plan_model(ModelSpec spec, const Shape& input, std::size_t classes) {
  ModelPlan model;
  model.spec = std::move(spec);
  model.input = input;
  model.classes = classes;
  drop_default_inputs(model.spec);
  const std::vector<std::size_t> order = evaluation_order(model.spec);
  // The output is the last line of the description; evaluation order keeps it last unless a line after it
  // feeds it, and then that line's output is unused, which check_all_used reports.
  std::map<std::string, int> position;
  for (const std::size_t index : order) {
    PlannedNode node = plan_node(model, model.spec.nodes[index], position);
    add_tensors(model, node, node.plan.parameters, true, node.parameters);
    add_tensors(model, node, node.plan.state, false, node.state);
    model.forward_flops += node.plan.forward_flops;
    for (const std::size_t field : node.plan.categorical_fields) {
      model.categorical_fields = std::max(model.categorical_fields, field + 1);
    }
    position[node.spec.name] = static_cast<int>(model.nodes.size());
    model.nodes.push_back(std::move(node));
  }
  if (model.nodes.back().spec.name != model.spec.nodes.back().name) {
    fail(model.spec, model.spec.nodes.back(),
         cat("layer ", model.spec.nodes.back().name,
             " is the last line but other layers read it: the model's output "
             "must be the last line"));
  }
  check_all_used(model);
  plan_loss(model);
  if (model.parameter_count == 0)
    throw Error(ExitCode::kUsage, cat(model.spec.source, ": the model has no parameters to train"));
  return model;
}

namespace {

std::vector<float> initial_values(const std::vector<ParameterInfo>& layout, const std::vector<InitRule>& rules,
                                  std::size_t count, std::mt19937_64* engine) {
  std::vector<float> values(count, 0.0f);
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const std::span<float> tensor = std::span<float>(values).subspan(layout[i].offset, layout[i].size);
    if (rules[i].kind == InitRule::Kind::kUniform) {
      PSTRAIN_ASSERT(engine != nullptr, "uniform initialisation of ", layout[i].name, " without an engine");
      fill_uniform(*engine, rules[i].limit, tensor);
    }
    if (rules[i].kind == InitRule::Kind::kOnes) std::fill(tensor.begin(), tensor.end(), 1.0f);
  }
  return values;
}

}  // namespace

std::vector<float> initial_parameters(const ModelPlan& plan, std::uint64_t seed) {
  std::vector<float> values(plan.parameter_count, 0.0f);
  visit_initial_parameters(plan, seed, plan.parameter_count,
                           [&](std::size_t index, std::size_t first, std::span<const float> block) {
                             std::copy(block.begin(), block.end(),
                                       values.begin() +
                                           static_cast<std::ptrdiff_t>(plan.parameters[index].offset + first));
                           });
  return values;
}

void visit_initial_parameters(const ModelPlan& plan, std::uint64_t seed, std::size_t block,
                              const std::function<void(std::size_t, std::size_t, std::span<const float>)>& visit,
                              const std::function<bool(std::size_t)>& wanted) {
  std::mt19937_64 engine(seed);
  std::vector<float> values;
  for (std::size_t i = 0; i < plan.parameters.size(); ++i) {
    const InitRule& rule = plan.parameter_init[i];
    const std::size_t size = plan.parameters[i].size;
    if (wanted && !wanted(i)) {
      if (rule.kind == InitRule::Kind::kUniform) engine.discard(size);  // the parameters after it draw the same
      continue;
    }
    const std::uint64_t key = counter_init_key(seed, plan.parameters[i].name);
    for (std::size_t first = 0; first < size; first += block) {
      values.assign(std::min(block, size - first), rule.kind == InitRule::Kind::kOnes ? 1.0f : 0.0f);
      // One draw per element in layout order, whatever the block: the same numbers as one fill of the tensor.
      if (rule.kind == InitRule::Kind::kUniform) fill_uniform(engine, rule.limit, values);
      if (rule.kind == InitRule::Kind::kCounterUniform) fill_counter_uniform(key, rule.limit, first, values);
      visit(i, first, values);
    }
  }
}

void initial_rows(const ModelPlan& plan, std::uint64_t seed, std::size_t parameter, std::uint64_t first_row,
                  std::uint64_t row_stride, std::span<float> out) {
  const ParameterInfo& info = plan.parameters.at(parameter);
  const InitRule& rule = plan.parameter_init.at(parameter);
  PSTRAIN_ASSERT(info.shape.size() == 2 && info.shape[1] > 0 && out.size() % info.shape[1] == 0, info.name,
                 " is not a table of rows of ", out.size(), " floats");
  PSTRAIN_ASSERT(rule.kind != InitRule::Kind::kUniform, info.name,
                 " draws from the model's engine in layout order: its rows cannot be drawn alone");
  const std::size_t width = info.shape[1];
  const std::uint64_t key = counter_init_key(seed, info.name);
  for (std::size_t k = 0; k < out.size() / width; ++k) {
    const std::uint64_t row = first_row + k * row_stride;
    PSTRAIN_ASSERT(row < info.shape[0], "row ", row, " of ", info.name, " with ", info.shape[0], " rows");
    const std::span<float> values = out.subspan(k * width, width);
    if (rule.kind == InitRule::Kind::kCounterUniform) {
      fill_counter_uniform(key, rule.limit, row * width, values);
    } else {
      std::fill(values.begin(), values.end(), rule.kind == InitRule::Kind::kOnes ? 1.0f : 0.0f);
    }
  }
}

std::vector<float> initial_state(const ModelPlan& plan) {
  return initial_values(plan.state, plan.state_init, plan.state_count, nullptr);
}

std::string describe_model(const ModelPlan& plan) {
  std::ostringstream out;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %-15s %-16s %12s %16s\n", "layer", "type", "output", "parameters",
                "FLOPs/sample");
  out << "model " << plan.spec.source << ", input " << to_string(plan.input) << "\n" << line;
  for (const PlannedNode& node : plan.nodes) {
    std::size_t parameters = 0;
    for (const std::size_t index : node.parameters) parameters += plan.parameters[index].size;
    std::snprintf(line, sizeof line, "%-16s %-15s %-16s %12zu %16.0f\n", node.spec.name.c_str(), node.spec.type.c_str(),
                  to_string(node.plan.output).c_str(), parameters, node.plan.forward_flops);
    out << line;
  }
  std::snprintf(line, sizeof line, "%-16s %-15s %-16s %12zu %16.0f\n", "total", "", "", plan.parameter_count,
                plan.forward_flops);
  out << line << "non-trainable state: " << plan.state_count << " floats; training costs about 3x the forward FLOPs\n";
  // Only for models that differ from the classifiers' default, so that their descriptions stay as they were.
  if (plan.loss != LossKind::kSoftmaxCrossEntropy || plan.categorical_fields > 0) {
    out << "loss: " << to_string(plan.loss) << "; reads " << plan.categorical_fields << " categorical field(s)\n";
  }
  return out.str();
}

}  // namespace pstrain::nn
