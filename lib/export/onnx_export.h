#pragma once
// A saved model (inference/saved_model.h) as a standard ONNX model, opset kOnnxOpset, that runs without pstrain.
//   inputs         "input": float [batch, C, H, W] for image models (NCHW, ONNX's convention: a shard's
//                  channels-last samples are transposed (0, 3, 1, 2) on the way in), float [batch, features] for
//                  vectors and a click model's dense features, int64 [batch, tokens] of word ids for language
//                  models; absent when no layer reads the data.
//                  Per embedding_bag layer L, "L.rows": int64 [batch, fields of L, bag length] of table rows,
//                  row = splitmix64(id + splitmix64(seed)) mod R (nn/id_hash.h; seed and R are L's), each bag
//                  padded to the length with R: the graph holds no hash (opset 13 has no bitwise xor), and its
//                  table has one more row, R, of zeros, so a pad adds nothing (the mean divides by the bag's
//                  rows below R, at least 1). The model's metadata "pstrain.embedding_bag.L" says
//                  "input=L.rows fields=F,.. seed=S rows=R pad=R pooling=sum|mean" (docs/using-a-model.md)
//   outputs        "logits" [batch, classes] and "probabilities" (their softmax); a click model (loss=bce)
//                  "logits" [batch, 1], the click logit, and "probabilities" [batch, 1], its sigmoid
//   weights        convolutions as OIHW (pstrain stores {filters, kh, kw, channels}); dense layers as pstrain's
//                  {units, inputs} under Gemm(transB=1); batch norm in evaluation mode with the saved running
//                  statistics; dropout as Identity; a flatten of an image transposes back to (h, w, c) order first,
//                  so the dense weights after it are pstrain's as they are. Inline while they total at most
//                  ExportOptions::external_data_above bytes; past it the largest go, largest first until the rest
//                  fits, to ONNX external data: the side file external_data_path(FILE) beside the .onnx
//                  (TensorProto data_location EXTERNAL, location = its file name, offsets multiples of 4096)
// A layer type without an ONNX form here is Error(kUsage) naming the layer.
#include <cstdint>
#include <filesystem>
#include <string>

#include "inference/saved_model.h"

namespace pstrain::exporting {

inline constexpr int kOnnxOpset = 13;
// protobuf cannot hold a message of 2 GiB: the weights inline stay under 2 GB, with room for the graph.
inline constexpr std::uint64_t kExternalDataAbove = 2'000'000'000;

struct ExportOptions {
  std::uint64_t external_data_above = kExternalDataAbove;  // bytes of weights the .onnx holds inline at most
};

// What write_onnx_model put in a side file (nothing: tensors == 0).
struct ExportSummary {
  std::filesystem::path external_data;
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;
};

// False in a build without Debian's libonnx-dev (onnx_none.cc): export then fails saying so.
bool built_with_onnx();

// The serialized ModelProto with every weight inline, checked by ONNX's own checker. Error(kUsage) for a layer it
// cannot express.
std::string onnx_model_bytes(const inference::SavedModel& model);

// The external-data side file of `target`: "<target>.data" ("model.onnx" -> "model.onnx.data").
std::filesystem::path external_data_path(const std::filesystem::path& target);

// Writes the model under a temporary name beside `target` and renames it into place, after its side file when
// its weights go past options.external_data_above (checked by ONNX's checker against the side file before the
// rename; a failure leaves neither). Error(kOutput) naming the path when `target` or the side file it needs
// exists already (pstrain never replaces a file) or cannot be written.
ExportSummary write_onnx_model(const inference::SavedModel& model, const std::filesystem::path& target,
                               const ExportOptions& options = {});

}  // namespace pstrain::exporting
