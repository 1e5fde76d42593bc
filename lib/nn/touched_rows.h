#pragma once
// The rows of a row table (layer.h) that one training step's backward pass wrote gradient into. An exchange that
// updates only those rows (local training, modes/local.cc) reads them instead of walking the whole table: with
// tables of millions of rows and a batch touching a few thousand, the whole-table update is most of a step.
#include <cstddef>
#include <cstdint>
#include <span>

namespace pstrain::nn {

struct TouchedRows {
  std::size_t offset = 0;               // the table's first float in the model's flat buffers
  std::size_t width = 0;                // floats per row
  std::size_t size = 0;                 // the whole table's floats
  std::span<const std::uint64_t> rows;  // distinct, ascending; valid until the next training step
};

}  // namespace pstrain::nn
