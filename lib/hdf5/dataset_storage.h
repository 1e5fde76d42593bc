#pragma once
// Checked before pstrain reads a dataset from a file it did not just write (shards, pass folders, checkpoints):
// HDF5 1.10.8 trusts a dataset's layout message, and a damaged address or size sends H5Dread past the end of the
// file or through a null buffer (fuzz_pass_folder: 3 of 5 crashes in a 10-minute run, SEGV in H5VM_memcpyvv).
// pstrain writes every dataset contiguous and whole, so anything else is a damaged (or foreign) file. Header-only:
// shared by lib/data and lib/checkpoint, which both link HDF5 (pstrain_hdf5) and neither depends on the other.
// Callers hold the HDF5 lock their layer uses and catch H5::Exception as they do around any HDF5 call.
#include <H5Cpp.h>

#include <cstdint>
#include <string>

#include "core/error.h"

namespace pstrain::hdf5 {

// Error(kInputData) "<where>: '<name>' ... (damaged file?)" unless the dataset is contiguous, `expected_bytes`
// long (its element count times the file's element size) and inside the file. An empty dataset (0 bytes) may be
// unallocated, as HDF5 leaves it.
inline void check_dataset_storage(const H5::DataSet& dataset, const std::string& where, const std::string& name,
                                  std::uint64_t expected_bytes) {
  const auto fail = [&](const std::string& what) {
    throw Error(ExitCode::kInputData, cat(where, ": '", name, "' ", what, " (damaged file?)"));
  };
  if (dataset.getCreatePlist().getLayout() != H5D_CONTIGUOUS) {
    fail("is not stored contiguously, as pstrain writes datasets");
  }
  if (expected_bytes == 0) return;
  const haddr_t offset = dataset.getOffset();
  const hsize_t stored = dataset.getStorageSize();
  if (offset == HADDR_UNDEF || stored != expected_bytes) {
    fail(cat("stores ", stored, " bytes where its shape and type need ", expected_bytes));
  }
  hsize_t file_bytes = 0;
  const hid_t file = H5Iget_file_id(dataset.getId());  // a new reference to the file, closed right below
  const herr_t sized = file < 0 ? -1 : H5Fget_filesize(file, &file_bytes);
  if (file >= 0) H5Fclose(file);
  if (sized < 0) fail("is in a file whose size HDF5 cannot tell");
  if (offset > file_bytes || expected_bytes > file_bytes - offset) {
    fail(cat("claims bytes ", offset, " to ", offset + expected_bytes, " of a ", file_bytes, "-byte file"));
  }
}

}  // namespace pstrain::hdf5
