#pragma once
// A saved model (inference/saved_model.h) as a standard ONNX model, opset kOnnxOpset, that runs without pstrain.
//   input          "input": float [batch, C, H, W] for image models (NCHW, ONNX's convention: a shard's
//                  channels-last samples are transposed (0, 3, 1, 2) on the way in), float [batch, features] for
//                  vectors, int64 [batch, tokens] of word ids for language models
//   outputs        "logits" [batch, classes] and "probabilities" (their softmax)
//   weights        convolutions as OIHW (pstrain stores {filters, kh, kw, channels}); dense layers as pstrain's
//                  {units, inputs} under Gemm(transB=1); batch norm in evaluation mode with the saved running
//                  statistics; dropout as Identity; a flatten of an image transposes back to (h, w, c) order first,
//                  so the dense weights after it are pstrain's as they are
// A layer type without an ONNX form here is Error(kUsage) naming the layer.
#include <filesystem>
#include <string>

#include "inference/saved_model.h"

namespace pstrain::exporting {

inline constexpr int kOnnxOpset = 13;

// False in a build without Debian's libonnx-dev (onnx_none.cc): export then fails saying so.
bool built_with_onnx();

// The serialized ModelProto, checked by ONNX's own checker. Error(kUsage) for a layer it cannot express.
std::string onnx_model_bytes(const inference::SavedModel& model);

// Writes onnx_model_bytes under a temporary name beside `target` and renames it into place. Error(kOutput)
// naming the path when it exists already (pstrain never replaces a file) or cannot be written.
void write_onnx_model(const inference::SavedModel& model, const std::filesystem::path& target);

}  // namespace pstrain::exporting
