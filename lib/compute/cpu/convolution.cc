// CPU im2col/col2im and max pooling over channels-last (NHWC) images.
//
// In NHWC one kernel row (ky fixed, kx = 0..k-1, every channel) is ONE contiguous run of k*C floats both in the
// image and in an im2col row, so im2col is a copy of k runs per output pixel and col2im an accumulation of the
// same runs. Padding only shortens a run at the image's left or right edge (zero-filled around it) or removes a
// whole kernel row at the top or bottom (zero-filled), so no per-element branch is ever taken.
#include <algorithm>
#include <limits>

#include "compute/cpu/cpu_backend.h"
#include "core/error.h"

namespace pstrain::compute {
namespace {

// The kernel columns [low, high) of the window starting at input column `left` that fall inside 0..width-1;
// empty (high <= low) when the whole window lies in the padding.
struct ValidColumns {
  int low;
  int high;
};

ValidColumns valid_columns(int left, int kernel, int width) {
  return {std::max(0, -left), std::min(kernel, width - left)};
}

// The output columns [begin, end) whose kernel window lies wholly inside the image: there a kernel row is one
// straight copy. Only the few columns before and after need the zero-filling path.
struct Interior {
  int begin;
  int end;
};

Interior interior_columns(const ConvGeometry& geometry) {
  const int out_width = geometry.out_width();
  // ox * stride - padding >= 0  and  ox * stride - padding + kernel <= width.
  const int begin = std::min(out_width, (geometry.padding + geometry.stride - 1) / geometry.stride);
  const int last_start = geometry.width + geometry.padding - geometry.kernel;  // largest ox * stride allowed
  const int end = last_start < 0 ? begin : std::clamp(last_start / geometry.stride + 1, begin, out_width);
  return {begin, end};
}

void check_conv_geometry(const ConvGeometry& geometry, int batch) {
  PSTRAIN_ASSERT(geometry.height > 0 && geometry.width > 0 && geometry.channels > 0 && geometry.kernel > 0 &&
                     geometry.stride > 0 && geometry.padding >= 0 && batch >= 0,
                 "convolution geometry ", geometry.height, "x", geometry.width, "x", geometry.channels, " kernel ",
                 geometry.kernel, " stride ", geometry.stride, " padding ", geometry.padding, " batch ", batch);
  PSTRAIN_ASSERT(geometry.out_height() > 0 && geometry.out_width() > 0, "convolution output ", geometry.out_height(),
                 "x", geometry.out_width(), " for input ", geometry.height, "x", geometry.width, " kernel ",
                 geometry.kernel, " padding ", geometry.padding);
}

void check_pool_geometry(const PoolGeometry& geometry, int batch) {
  PSTRAIN_ASSERT(geometry.window > 0 && geometry.stride > 0 && geometry.channels > 0 && batch >= 0 &&
                     geometry.height >= geometry.window && geometry.width >= geometry.window,
                 "pool geometry ", geometry.height, "x", geometry.width, "x", geometry.channels, " window ",
                 geometry.window, " stride ", geometry.stride, " batch ", batch);
  // argmax holds int32 indices into the whole batch.
  const auto elements = static_cast<std::size_t>(batch) * static_cast<std::size_t>(geometry.height) *
                        static_cast<std::size_t>(geometry.width) * static_cast<std::size_t>(geometry.channels);
  PSTRAIN_ASSERT(elements <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()), "pool input of ",
                 elements, " elements does not fit int32 argmax indices");
}

// Plain loops: __restrict lets GCC vectorise them without a runtime overlap check.
inline void copy_run(const float* __restrict source, float* __restrict destination, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) destination[i] = source[i];
}

inline void zero_run(float* destination, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) destination[i] = 0.0f;
}

inline void add_run(const float* __restrict source, float* __restrict destination, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) destination[i] += source[i];
}

// The interior of an output row: `count` output pixels whose kernel windows lie wholly inside the image
// horizontally. Of each window only the kernel rows [ky_begin, ky_end) lie inside vertically (the others are
// padding); `image` points at the first pixel's window at row ky_begin, `columns` at the first pixel's im2col
// row. Consecutive pixels are `image_step` floats apart in the image, kernel rows `row_size` apart.
//
// A first layer's kernel row is only k*C floats (3 for a 3x3 kernel on grey images, 9 on RGB), where a memcpy
// call per row would cost more than the copy, so those short rows get a compile-time length (kRun != 0).
struct InteriorSpan {
  int count;
  int ky_begin, ky_end, kernel;
  std::size_t image_step, row_size, column_width, run;
};

template <std::size_t kRun>
void im2col_interior(const float* image, float* columns, InteriorSpan span) {
  const std::size_t run = kRun != 0 ? kRun : span.run;
  const std::size_t before = static_cast<std::size_t>(span.ky_begin) * run;
  const std::size_t after = static_cast<std::size_t>(span.kernel - span.ky_end) * run;
  const int rows = span.ky_end - span.ky_begin;
  for (int i = 0; i < span.count; ++i, image += span.image_step, columns += span.column_width) {
    zero_run(columns, before);
    for (int r = 0; r < rows; ++r) copy_run(image + r * span.row_size, columns + before + r * run, run);
    zero_run(columns + before + rows * run, after);
  }
}

template <std::size_t kRun>
void col2im_interior(const float* columns, float* image, InteriorSpan span) {
  const std::size_t run = kRun != 0 ? kRun : span.run;
  const std::size_t before = static_cast<std::size_t>(span.ky_begin) * run;
  const int rows = span.ky_end - span.ky_begin;
  for (int i = 0; i < span.count; ++i, image += span.image_step, columns += span.column_width) {
    for (int r = 0; r < rows; ++r) add_run(columns + before + r * run, image + r * span.row_size, run);
  }
}

void im2col_interior_dispatch(const float* image, float* columns, const InteriorSpan& span) {
  switch (span.run) {
    case 3: return im2col_interior<3>(image, columns, span);
    case 9: return im2col_interior<9>(image, columns, span);
    default: return im2col_interior<0>(image, columns, span);
  }
}

void col2im_interior_dispatch(const float* columns, float* image, const InteriorSpan& span) {
  switch (span.run) {
    case 3: return col2im_interior<3>(columns, image, span);
    case 9: return col2im_interior<9>(columns, image, span);
    default: return col2im_interior<0>(columns, image, span);
  }
}

}  // namespace

void CpuBackend::scale(float* data, std::size_t count, float factor) {
  for (std::size_t i = 0; i < count; ++i) data[i] *= factor;
}

void CpuBackend::im2col(const float* x, float* columns, const ConvGeometry& geometry, int batch) {
  check_conv_geometry(geometry, batch);
  const int height = geometry.height, width = geometry.width, kernel = geometry.kernel;
  const int stride = geometry.stride, padding = geometry.padding;
  const int out_height = geometry.out_height(), out_width = geometry.out_width();
  const auto channels = static_cast<std::size_t>(geometry.channels);
  const auto column_width = static_cast<std::size_t>(geometry.column_width());
  const std::size_t run = static_cast<std::size_t>(kernel) * channels;  // one kernel row of one im2col row
  const std::size_t row_size = static_cast<std::size_t>(width) * channels;
  const std::size_t image_size = static_cast<std::size_t>(height) * row_size;
  const Interior interior = interior_columns(geometry);

  // The columns are written strictly in order, output pixel by output pixel.
  for (int n = 0; n < batch; ++n) {
    const float* image = x + static_cast<std::size_t>(n) * image_size;
    for (int oy = 0; oy < out_height; ++oy) {
      float* pixel_rows = columns + (static_cast<std::size_t>(n) * out_height + oy) * out_width * column_width;
      // Kernel rows [ky_begin, ky_end) fall inside the image; the others hang over the padding.
      const int top = oy * stride - padding;
      const int ky_begin = std::clamp(-top, 0, kernel), ky_end = std::clamp(height - top, ky_begin, kernel);
      if (ky_begin == ky_end) {
        zero_run(pixel_rows, out_width * column_width);
        continue;
      }
      const float* first_row = image + (top + ky_begin) * row_size;  // window row ky_begin
      auto border = [&](int ox) {
        const int left = ox * stride - padding;
        const auto [low, high] = valid_columns(left, kernel, width);
        float* out = pixel_rows + ox * column_width;
        for (int ky = 0; ky < kernel; ++ky, out += run) {
          if (ky < ky_begin || ky >= ky_end || high <= low) {
            zero_run(out, run);
            continue;
          }
          zero_run(out, low * channels);
          copy_run(first_row + (ky - ky_begin) * row_size + (left + low) * channels, out + low * channels,
                   (high - low) * channels);
          zero_run(out + high * channels, (kernel - high) * channels);
        }
      };
      for (int ox = 0; ox < interior.begin; ++ox) border(ox);
      if (interior.begin < interior.end) {
        const InteriorSpan span{interior.end - interior.begin,
                                ky_begin,
                                ky_end,
                                kernel,
                                static_cast<std::size_t>(stride) * channels,
                                row_size,
                                column_width,
                                run};
        im2col_interior_dispatch(first_row + (interior.begin * stride - padding) * channels,
                                 pixel_rows + interior.begin * column_width, span);
      }
      for (int ox = interior.end; ox < out_width; ++ox) border(ox);
    }
  }
}

void CpuBackend::col2im(const float* columns, float* dx, const ConvGeometry& geometry, int batch) {
  check_conv_geometry(geometry, batch);
  const int height = geometry.height, width = geometry.width, kernel = geometry.kernel;
  const int stride = geometry.stride, padding = geometry.padding;
  const int out_height = geometry.out_height(), out_width = geometry.out_width();
  const auto channels = static_cast<std::size_t>(geometry.channels);
  const auto column_width = static_cast<std::size_t>(geometry.column_width());
  const std::size_t run = static_cast<std::size_t>(kernel) * channels;
  const std::size_t row_size = static_cast<std::size_t>(width) * channels;
  const std::size_t image_size = static_cast<std::size_t>(height) * row_size;
  const Interior interior = interior_columns(geometry);

  // One image at a time: it is zeroed and then accumulated into while it is still in cache. The columns, which
  // are not, are read strictly in order, output pixel by output pixel, the mirror image of im2col.
  for (int n = 0; n < batch; ++n) {
    float* image = dx + static_cast<std::size_t>(n) * image_size;
    zero_run(image, image_size);
    for (int oy = 0; oy < out_height; ++oy) {
      const float* pixel_rows = columns + (static_cast<std::size_t>(n) * out_height + oy) * out_width * column_width;
      const int top = oy * stride - padding;
      const int ky_begin = std::clamp(-top, 0, kernel), ky_end = std::clamp(height - top, ky_begin, kernel);
      if (ky_begin == ky_end) continue;  // the whole window came from the padding
      float* first_row = image + (top + ky_begin) * row_size;
      auto border = [&](int ox) {
        const int left = ox * stride - padding;
        const auto [low, high] = valid_columns(left, kernel, width);
        if (high <= low) return;
        for (int ky = ky_begin; ky < ky_end; ++ky) {
          add_run(pixel_rows + ox * column_width + ky * run + low * channels,
                  first_row + (ky - ky_begin) * row_size + (left + low) * channels, (high - low) * channels);
        }
      };
      for (int ox = 0; ox < interior.begin; ++ox) border(ox);
      if (interior.begin < interior.end) {
        const InteriorSpan span{interior.end - interior.begin,
                                ky_begin,
                                ky_end,
                                kernel,
                                static_cast<std::size_t>(stride) * channels,
                                row_size,
                                column_width,
                                run};
        col2im_interior_dispatch(pixel_rows + interior.begin * column_width,
                                 first_row + (interior.begin * stride - padding) * channels, span);
      }
      for (int ox = interior.end; ox < out_width; ++ox) border(ox);
    }
  }
}

void CpuBackend::max_pool_forward(const float* x, float* y, std::int32_t* argmax, const PoolGeometry& geometry,
                                  int batch) {
  check_pool_geometry(geometry, batch);
  const int height = geometry.height, width = geometry.width, window = geometry.window, stride = geometry.stride;
  const int out_height = geometry.out_height(), out_width = geometry.out_width();
  const int channels = geometry.channels;

  // The window's first element seeds the maximum; the others replace it only when strictly greater, so ties
  // keep the first in window order. A NaN replaces a number (and is then kept) so that a diverged layer shows
  // up in the loss instead of being pooled away.
  auto greater = [](float value, float current) { return value > current || (value != value && current == current); };

  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < out_height; ++oy) {
      for (int ox = 0; ox < out_width; ++ox) {
        const std::size_t out_index =
            ((static_cast<std::size_t>(n) * out_height + oy) * out_width + ox) * static_cast<std::size_t>(channels);
        float* __restrict best = y + out_index;
        std::int32_t* __restrict best_index = argmax + out_index;
        const auto first = static_cast<std::int32_t>(((n * height + oy * stride) * width + ox * stride) * channels);
        if (window == 2) {
          // The CNN's pool: all four candidates in registers, each output written once.
          const std::int32_t offsets[4] = {0, channels, width * channels, (width + 1) * channels};
          const float* __restrict corner = x + first;
          for (int c = 0; c < channels; ++c) {
            float value = corner[c];
            std::int32_t index = first + c;
            for (int k = 1; k < 4; ++k) {
              const float candidate = corner[offsets[k] + c];
              const bool take = greater(candidate, value);
              value = take ? candidate : value;
              index = take ? first + offsets[k] + c : index;
            }
            best[c] = value;
            best_index[c] = index;
          }
          continue;
        }
        for (int wy = 0; wy < window; ++wy) {
          for (int wx = 0; wx < window; ++wx) {
            const std::int32_t start = first + (wy * width + wx) * channels;
            const float* __restrict candidate = x + start;
            if (wy == 0 && wx == 0) {
              for (int c = 0; c < channels; ++c) {
                best[c] = candidate[c];
                best_index[c] = start + c;
              }
              continue;
            }
            for (int c = 0; c < channels; ++c) {
              const bool take = greater(candidate[c], best[c]);
              best[c] = take ? candidate[c] : best[c];
              best_index[c] = take ? start + c : best_index[c];
            }
          }
        }
      }
    }
  }
}

void CpuBackend::max_pool_backward(const float* dy, const std::int32_t* argmax, float* dx, const PoolGeometry& geometry,
                                   int batch) {
  check_pool_geometry(geometry, batch);
  const std::size_t in_image = static_cast<std::size_t>(geometry.height) * geometry.width * geometry.channels;
  const std::size_t out_image =
      static_cast<std::size_t>(geometry.out_height()) * geometry.out_width() * geometry.channels;
  // An image's argmax points into that image only, so each image is zeroed and scattered into while in cache.
  for (int n = 0; n < batch; ++n) {
    std::fill_n(dx + n * in_image, in_image, 0.0f);
    const std::size_t end = (n + 1) * out_image;
    for (std::size_t i = n * out_image; i < end; ++i) dx[argmax[i]] += dy[i];
  }
}

}  // namespace pstrain::compute
