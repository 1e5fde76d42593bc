#include "compute/cpu/onednn_convolution.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace pstrain::compute {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kFloat = memory::data_type::f32;

bool uses_winograd(const ConvGeometry& g) {
  return g.kernel == 3 && g.stride == 1 && g.channels >= 16;
}

bool is_reference(const std::string& implementation) {
  return implementation.find("ref") != std::string::npos;
}

// What each buffer in oneDNN's layouts holds: one buffer per purpose, since two purposes may share a layout
// (x and y of a convolution with as many filters as input channels) while one primitive reads one and writes the
// other.
enum Slot {
  kSource,
  kWeights,
  kOutput,
  kOutputGradient,
  kWeightGradient,
  kDataWeights,
  kDataOutputGradient,
  kSourceGradient,
  kSlots
};

// The three primitives of one batch size. Memories in pstrain's layouts wrap the caller's pointers per call.
struct Primitives {
  dnnl::convolution_forward::primitive_desc forward_desc;
  dnnl::convolution_backward_weights::primitive_desc weights_desc;
  dnnl::convolution_backward_data::primitive_desc data_desc;
  dnnl::convolution_forward forward;
  dnnl::convolution_backward_weights backward_weights;
  dnnl::convolution_backward_data backward_data;
};

class OnednnConvolution final : public ConvolutionKernel {
 public:
  OnednnConvolution(const ConvGeometry& geometry, int filters, dnnl::algorithm algorithm)
      : geometry_(geometry),
        filters_(filters),
        algorithm_(algorithm),
        engine_(dnnl::engine::kind::cpu, 0),
        stream_(engine_) {}

  // The primitives for `batch`, made on first use (a pass's last batch may be smaller than the others).
  Primitives& primitives(int batch) {
    auto found = by_batch_.find(batch);
    if (found != by_batch_.end()) return found->second;
    try {
      return by_batch_.emplace(batch, make_primitives(batch)).first->second;
    } catch (const dnnl::error& failure) {  // a batch size oneDNN has no kernel for: say which, not only oneDNN's code
      throw Error(ExitCode::kInternal,
                  cat("oneDNN cannot run the ", geometry_.height, "x", geometry_.width, "x", geometry_.channels,
                      " convolution with ", filters_, " filters at batch ", batch, ": ", failure.what()));
    }
  }

  Primitives make_primitives(int batch) const {
    const auto src = any_desc(source_dims(batch)), weights = any_desc(weight_dims()),
               dst = any_desc(output_dims(batch));
    const memory::desc bias({filters_}, kFloat, Tag::x);
    const memory::dims strides{geometry_.stride, geometry_.stride}, padding{geometry_.padding, geometry_.padding};
    const dnnl::convolution_forward::primitive_desc forward({dnnl::prop_kind::forward_training, algorithm_, src,
                                                             weights, bias, dst, strides, padding, padding},
                                                            engine_);
    const dnnl::convolution_backward_weights::primitive_desc backward_weights({algorithm_, src, weights, bias, dst,
                                                                               strides, padding, padding},
                                                                              engine_, forward);
    const dnnl::convolution_backward_data::primitive_desc backward_data({algorithm_, src, weights, dst, strides,
                                                                         padding, padding},
                                                                        engine_, forward);
    Primitives made{forward,
                    backward_weights,
                    backward_data,
                    dnnl::convolution_forward(forward),
                    dnnl::convolution_backward_weights(backward_weights),
                    dnnl::convolution_backward_data(backward_data)};
    return made;
  }

  std::string description() const override { return description_; }

  // Whether oneDNN has a kernel of its own (not its reference loops) for all three products at `batch`.
  bool all_fast(int batch) {
    const Primitives& p = primitives(batch);
    const std::string implementation = p.forward_desc.impl_info_str();
    description_ = cat("oneDNN ", algorithm_ == dnnl::algorithm::convolution_winograd ? "winograd" : "direct", " (",
                       implementation, ")");
    return !is_reference(implementation) && !is_reference(p.weights_desc.impl_info_str()) &&
           !is_reference(p.data_desc.impl_info_str());
  }

  void forward(const float* x, const float* weight, const float* bias, float* y, int batch) override {
    Primitives& p = primitives(batch);
    memory user_x = user(source_dims(batch), Tag::nhwc, x), user_w = user(weight_dims(), Tag::ohwi, weight);
    memory user_y = user(output_dims(batch), Tag::nhwc, y);
    memory src = in_layout(kSource, user_x, p.forward_desc.src_desc());
    memory w = in_layout(kWeights, user_w, p.forward_desc.weights_desc());
    memory dst = layout_for(kOutput, user_y, p.forward_desc.dst_desc());
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}};
    if (bias != nullptr) {
      args.emplace(DNNL_ARG_BIAS, user({filters_}, Tag::x, bias));
    } else {
      zero_bias_.assign(static_cast<std::size_t>(filters_), 0.0f);
      args.emplace(DNNL_ARG_BIAS, user({filters_}, Tag::x, zero_bias_.data()));
    }
    p.forward.execute(stream_, args);
    out_of_layout(dst, user_y);
    stream_.wait();
  }

  void backward(const float* x, const float* dy, const float* weight, float* dweight, float* dbias, float* dx,
                int batch) override {
    Primitives& p = primitives(batch);
    memory user_x = user(source_dims(batch), Tag::nhwc, x), user_dy = user(output_dims(batch), Tag::nhwc, dy);
    memory user_dw = user(weight_dims(), Tag::ohwi, dweight);
    memory src = in_layout(kSource, user_x, p.weights_desc.src_desc());
    memory diff_dst = in_layout(kOutputGradient, user_dy, p.weights_desc.diff_dst_desc());
    memory diff_weights = layout_for(kWeightGradient, user_dw, p.weights_desc.diff_weights_desc());
    if (dbias == nullptr) unused_bias_gradient_.resize(static_cast<std::size_t>(filters_));
    memory diff_bias = user({filters_}, Tag::x, dbias != nullptr ? dbias : unused_bias_gradient_.data());
    p.backward_weights.execute(stream_, {{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_DIFF_DST, diff_dst},
                                         {DNNL_ARG_DIFF_WEIGHTS, diff_weights},
                                         {DNNL_ARG_DIFF_BIAS, diff_bias}});
    out_of_layout(diff_weights, user_dw);
    if (dx != nullptr) {
      memory user_w = user(weight_dims(), Tag::ohwi, weight), user_dx = user(source_dims(batch), Tag::nhwc, dx);
      const memory data_dy = diff_dst.get_desc() == p.data_desc.diff_dst_desc()
                                 ? diff_dst
                                 : in_layout(kDataOutputGradient, user_dy, p.data_desc.diff_dst_desc());
      memory w = in_layout(kDataWeights, user_w, p.data_desc.weights_desc());
      memory diff_src = layout_for(kSourceGradient, user_dx, p.data_desc.diff_src_desc());
      p.backward_data.execute(stream_,
                              {{DNNL_ARG_DIFF_DST, data_dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, diff_src}});
      out_of_layout(diff_src, user_dx);
    }
    stream_.wait();
  }

 private:
  // oneDNN's logical dimensions are always N, C, H, W (and O, I, H, W); the tags say how memory holds them.
  memory::dims source_dims(int batch) const { return {batch, geometry_.channels, geometry_.height, geometry_.width}; }
  memory::dims output_dims(int batch) const { return {batch, filters_, geometry_.out_height(), geometry_.out_width()}; }
  memory::dims weight_dims() const { return {filters_, geometry_.channels, geometry_.kernel, geometry_.kernel}; }
  static memory::desc any_desc(const memory::dims& dims) { return {dims, kFloat, Tag::any}; }

  memory user(const memory::dims& dims, Tag tag, const float* data) {
    return {{dims, kFloat, tag}, engine_, const_cast<float*>(data)};
  }
  // `from` in layout `desc`: itself where it already is, else a reordered copy in the slot's buffer.
  memory in_layout(Slot slot, memory from, const memory::desc& desc) {  // memory is a handle: copies share data
    if (from.get_desc() == desc) return from;
    memory to = scratch(slot, desc);
    dnnl::reorder(from, to).execute(stream_, from, to);
    return to;
  }
  // Where a primitive writes a result that belongs in `user`: `user` itself, or scratch in the primitive's layout.
  memory layout_for(Slot slot, const memory& user, const memory::desc& desc) {
    return user.get_desc() == desc ? user : scratch(slot, desc);
  }
  void out_of_layout(memory& from, memory& user) {
    if (from.get_data_handle() != user.get_data_handle()) dnnl::reorder(from, user).execute(stream_, from, user);
  }
  // The slot's buffer, (re)made when the layout or the batch size changed.
  memory scratch(Slot slot, const memory::desc& desc) {
    memory& buffer = scratch_[slot];
    if (!buffer || buffer.get_desc() != desc) buffer = memory(desc, engine_);
    return buffer;
  }

  ConvGeometry geometry_;
  int filters_;
  dnnl::algorithm algorithm_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::map<int, Primitives> by_batch_;
  std::string description_;
  memory scratch_[kSlots];
  std::vector<float> zero_bias_, unused_bias_gradient_;
};

}  // namespace

std::unique_ptr<ConvolutionKernel> make_onednn_convolution(const ConvGeometry& geometry, int filters, int max_batch) {
  try {
    const auto algorithm =
        uses_winograd(geometry) ? dnnl::algorithm::convolution_winograd : dnnl::algorithm::convolution_direct;
    auto convolution = std::make_unique<OnednnConvolution>(geometry, filters, algorithm);
    if (!convolution->all_fast(max_batch)) return nullptr;
    return convolution;
  } catch (const dnnl::error&) {  // no CPU engine
    return nullptr;
  } catch (const Error&) {  // no primitive for this shape: im2col + gemm
    return nullptr;
  }
}

bool onednn_available() {
  return true;
}

void set_onednn_threads(int threads) {
  omp_set_num_threads(threads);
}

}  // namespace pstrain::compute
