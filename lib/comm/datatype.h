#pragma once
// RAII for committed MPI derived datatypes.
#include <mpi.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "comm/mpi_check.h"

namespace pstrain::comm {

class Datatype {
 public:
  Datatype() = default;
  // Blocks of floats at the given element displacements, as one datatype (MPI_Type_indexed). Lets one RMA call
  // gather a shard's scattered blocks straight out of the flat parameter vector, with no packing copy.
  static Datatype indexed_floats(const std::vector<int>& lengths, const std::vector<int>& displacements) {
    Datatype type;
    MPI_CHECK(MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), MPI_FLOAT,
                               &type.type_));
    MPI_CHECK(MPI_Type_commit(&type.type_));
    return type;
  }
  // Blocks of `lengths[i]` elements of `element` at byte displacements `bytes[i]` (MPI_Type_create_hindexed): one
  // RMA call over the rows of many tables in one window, whose displacements may pass what an int holds.
  static Datatype hindexed(const std::vector<int>& lengths, const std::vector<MPI_Aint>& bytes, MPI_Datatype element) {
    Datatype type;
    MPI_CHECK(
        MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), bytes.data(), element, &type.type_));
    MPI_CHECK(MPI_Type_commit(&type.type_));
    return type;
  }
  // Blocks of `block` floats each at the given element displacements (MPI_Type_create_indexed_block): the rows
  // of a table that one step touches.
  static Datatype indexed_block_floats(int block, const std::vector<int>& displacements) {
    Datatype type;
    MPI_CHECK(MPI_Type_create_indexed_block(static_cast<int>(displacements.size()), block, displacements.data(),
                                            MPI_FLOAT, &type.type_));
    MPI_CHECK(MPI_Type_commit(&type.type_));
    return type;
  }
  // `count` blocks of `block` floats, `stride` floats apart (MPI_Type_vector): every P-th row of a table.
  static Datatype strided_floats(int count, int block, int stride) {
    Datatype type;
    MPI_CHECK(MPI_Type_vector(count, block, stride, MPI_FLOAT, &type.type_));
    MPI_CHECK(MPI_Type_commit(&type.type_));
    return type;
  }
  // One element of `bytes` bytes (MPI_Type_contiguous of MPI_BYTE): a plain struct shipped as it is, counted in
  // elements rather than bytes, so that a count fits an int for 8x larger arrays.
  static Datatype contiguous_bytes(std::size_t bytes) {
    Datatype type;
    MPI_CHECK(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type.type_));
    MPI_CHECK(MPI_Type_commit(&type.type_));
    return type;
  }
  ~Datatype() {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  Datatype(Datatype&& other) noexcept { std::swap(type_, other.type_); }
  Datatype& operator=(Datatype&& other) noexcept {
    std::swap(type_, other.type_);
    return *this;
  }
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

  MPI_Datatype handle() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace pstrain::comm
