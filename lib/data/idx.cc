#include "data/idx.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "data/gz_reader.h"

namespace pstrain::data {

namespace {

std::string hex32(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08X", value);
  return text;
}

std::uint32_t big_endian32(const unsigned char* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) |
         std::uint32_t{bytes[3]};
}

// "60000 images of 28x28" / "60000 labels": how the header's promise reads in error messages.
std::string describe(const std::vector<std::uint32_t>& dims, const char* kind) {
  std::ostringstream text;
  text << dims[0] << ' ' << kind;
  for (std::size_t i = 1; i < dims.size(); ++i) text << (i == 1 ? " of " : "x") << dims[i];
  return text.str();
}

IdxArray read_idx(const std::filesystem::path& path, std::uint32_t expected_magic, const char* kind) {
  const std::string name = path.string();
  const std::size_t rank = expected_magic & 0xFF;
  const std::size_t header_size = 4 + 4 * rank;

  GzReader in(path);
  unsigned char header[16];
  const std::size_t got = in.read(header, header_size);
  const char* cut = in.cut_off() ? " (the gzip stream is cut off)" : "";
  if (got < 4) {
    throw Error(ExitCode::kInputData,
                cat(name, ": truncated: the file ends after ", got, " bytes, before the 4-byte IDX magic number", cut));
  }
  const std::uint32_t magic = big_endian32(header);
  if (magic != expected_magic) {
    throw Error(ExitCode::kInputData, cat(name, ": bad magic number ", hex32(magic), " (expected ",
                                          hex32(expected_magic), " for IDX ", kind, ")"));
  }
  if (got < header_size) {
    throw Error(ExitCode::kInputData, cat(name, ": truncated: the file ends after ", got, " bytes, inside the ",
                                          header_size, "-byte IDX header", cut));
  }

  IdxArray array;
  std::uint64_t total = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    const std::uint32_t dim = big_endian32(header + 4 + 4 * i);
    if (dim == 0) {
      throw Error(ExitCode::kInputData,
                  cat(name, ": dimension ", i, " of the IDX header is 0 (the file holds no ", kind, ")"));
    }
    array.dims.push_back(dim);
    // Cannot overflow for rank <= 2, and the 3-D product of uint32 values is checked against 2^62.
    if (total > (std::uint64_t{1} << 62) / dim) {
      throw Error(ExitCode::kInputData,
                  cat(name, ": header announces ", describe(array.dims, kind), ", which is implausibly large"));
    }
    total *= dim;
  }

  // Grow the buffer as data actually arrives instead of trusting the header with one huge allocation: from
  // 64 KiB, doubling, so that a short file claiming a large array costs no more than the file itself.
  std::uint64_t chunk = std::uint64_t{1} << 16;
  while (array.values.size() < total) {
    const std::size_t before = array.values.size();
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, total - before));
    chunk = std::min<std::uint64_t>(chunk * 2, std::uint64_t{1} << 26);
    array.values.resize(before + want);
    const std::size_t read = in.read(array.values.data() + before, want);
    if (read < want) {
      throw Error(ExitCode::kInputData,
                  cat(name, ": truncated: header announces ", describe(array.dims, kind), " (", header_size + total,
                      " bytes) but the file ends after ", header_size + before + read, " bytes",
                      in.cut_off() ? " (the gzip stream is cut off)" : ""));
    }
  }
  const std::uint64_t extra = in.skip_to_end();
  if (extra != 0) {
    throw Error(ExitCode::kInputData, cat(name, ": trailing data: header announces ", describe(array.dims, kind), " (",
                                          header_size + total, " bytes) but the file holds ", extra, " more bytes"));
  }
  if (in.cut_off()) {
    throw Error(ExitCode::kInputData, cat(name, ": truncated gzip data: all ", header_size + total,
                                          " announced bytes are there but the gzip stream's end marker and checksum"
                                          " are missing"));
  }
  return array;
}

}  // namespace

IdxArray read_idx_images(const std::filesystem::path& path) {
  return read_idx(path, kIdxImagesMagic, "images");
}

IdxArray read_idx_labels(const std::filesystem::path& path) {
  return read_idx(path, kIdxLabelsMagic, "labels");
}

Samples read_idx_pair(const std::filesystem::path& images, const std::filesystem::path& labels,
                      const std::string& dataset_name, std::uint32_t num_classes) {
  PSTRAIN_ASSERT(num_classes > 0 && num_classes <= 256, "num_classes ", num_classes, " for uint8 IDX labels");
  const IdxArray image_array = read_idx_images(images);
  const IdxArray label_array = read_idx_labels(labels);

  const std::uint32_t count = image_array.dims[0];
  if (label_array.dims[0] != count) {
    throw Error(ExitCode::kInputData,
                cat(labels.string(), ": holds ", label_array.dims[0], " labels but ", images.string(), " holds ", count,
                    " images (the two files must describe the same samples)"));
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (label_array.values[i] >= num_classes) {
      throw Error(ExitCode::kInputData,
                  cat(labels.string(), ": label ", int{label_array.values[i]}, " of sample ", i, " is out of range (",
                      dataset_name, " has ", num_classes, " classes, labels 0..", num_classes - 1, ")"));
    }
  }

  Samples samples;
  samples.meta.dataset = dataset_name;
  samples.meta.sample_shape = {image_array.dims[1], image_array.dims[2]};
  samples.meta.num_classes = num_classes;
  samples.meta.sample_count = count;
  samples.meta.source = cat(images.filename().string(), ", ", labels.filename().string());

  samples.features.resize(image_array.values.size());
  for (std::size_t i = 0; i < image_array.values.size(); ++i) {
    samples.features[i] = static_cast<float>(image_array.values[i]) / 255.0f;
  }
  samples.labels.assign(label_array.values.begin(), label_array.values.end());
  return samples;
}

}  // namespace pstrain::data
