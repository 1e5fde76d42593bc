#pragma once
// The vectors that the interaction layers (dot_interaction.cc, fm.cc) combine: each input is one vector per
// sample ({d}: a bottom MLP's output, an embedding_bag of one field) or several ({k, d}: an embedding_bag of a
// shared table), all of one width d. They are gathered VECTOR-MAJOR, vector v of sample s at
// stack[(v * batch + s) * d]: each vector is then a contiguous batch x d block (sums over vectors are axpys),
// and each sample's n vectors are an n x d matrix of row stride batch * d (one strided GEMM gives its Gram
// matrix). Only backend operations, so the layers run on every backend.
#include <cstddef>
#include <span>
#include <vector>

#include "compute/backend.h"
#include "core/error.h"
#include "nn/layer_attributes.h"
#include "nn/shape.h"

namespace pstrain::nn {

struct StackShape {
  std::size_t vectors = 0;  // n, over every input
  std::size_t dim = 0;      // d
};

// Error (through attributes.fail) for an input that is not {d} or {k, d}, or of another width than the first.
inline StackShape stack_shape(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  StackShape shape{0, inputs[0].back()};
  for (const Shape& input : inputs) {
    if (input.size() > 2) attributes.fail(cat("needs vectors {d} or stacks of vectors {k, d}, got ", to_string(input)));
    if (input.back() != shape.dim) {
      attributes.fail(cat("combines vectors of one width: ", to_string(inputs[0]), " and ", to_string(input)));
    }
    shape.vectors += input.size() == 2 ? input[0] : 1;
  }
  return shape;
}

class VectorStack {
 public:
  VectorStack(compute::Backend& backend, const std::vector<Shape>& inputs, StackShape shape, std::size_t max_batch)
      : backend_(backend),
        shape_(shape),
        data_(backend, max_batch * shape.vectors * shape.dim),
        gradient_(backend, max_batch * shape.vectors * shape.dim) {
    for (const Shape& input : inputs) counts_.push_back(static_cast<int>(input.size() == 2 ? input[0] : 1));
  }

  int vectors() const { return static_cast<int>(shape_.vectors); }
  int dim() const { return static_cast<int>(shape_.dim); }
  // Vector v of the batch (batch x d), in the stack and in its gradient.
  float* vector(int v, int batch) const { return data_.data() + offset(v, batch); }
  float* gradient(int v, int batch) const { return gradient_.data() + offset(v, batch); }

  void gather(std::span<const float* const> inputs, int batch) {
    int v = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      for (int j = 0; j < counts_[i]; ++j, ++v) {
        backend_.copy_columns(inputs[i] + j * dim(), counts_[i] * dim(), vector(v, batch), dim(), batch, dim());
      }
    }
  }
  // The stack's gradient to the inputs' (overwritten; null ones skipped).
  void scatter_gradient(std::span<float* const> input_gradients, int batch) {
    int v = 0;
    for (std::size_t i = 0; i < input_gradients.size(); ++i) {
      for (int j = 0; j < counts_[i]; ++j, ++v) {
        if (input_gradients[i] == nullptr) continue;
        backend_.copy_columns(gradient(v, batch), dim(), input_gradients[i] + j * dim(), counts_[i] * dim(), batch,
                              dim());
      }
    }
  }

 private:
  std::size_t offset(int v, int batch) const {
    return static_cast<std::size_t>(v) * static_cast<std::size_t>(batch) * shape_.dim;
  }

  compute::Backend& backend_;
  StackShape shape_;
  std::vector<int> counts_;  // vectors per input
  compute::Buffer<float> data_;
  compute::Buffer<float> gradient_;
};

}  // namespace pstrain::nn
