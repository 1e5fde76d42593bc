#pragma once
// The cuDNN functions the CUDA backend's convolutions call (cuDNN 9's legacy convolution API), taken at run time
// from a libcudnn.so.<major of the headers built against> that this machine has. cuDNN is not linked and not
// carried in the GPU bundle: with its engines it is ~470 MB. The GPU machine's own copy is used instead, found in
// this order (the first that loads wins):
//   1. PSTRAIN_CUDNN_LIBRARY: a file, or a folder holding libcudnn.so.9 ("none" turns cuDNN off: im2col + gemm);
//   2. libcudnn.so.9 as the dynamic linker finds it (LD_LIBRARY_PATH, the ld cache: a system install);
//   3. /usr/local/cuda/lib64, /usr/local/cuda/lib, /usr/lib/x86_64-linux-gnu;
//   4. the copy PyTorch ships: <prefix>/lib/python3.*/{site,dist}-packages/nvidia/cudnn/lib for the prefixes
//      $VIRTUAL_ENV, $CONDA_PREFIX, /usr/local, /usr, /opt/conda and ~/.local.
// cuDNN 9's libcudnn.so is a small shim that opens its sub-libraries (libcudnn_cnn, libcudnn_ops, the engines)
// from its own folder (RUNPATH $ORIGIN), so loading the shim by its full path is enough.
#include <cudnn.h>

#include <string>

namespace pstrain::compute::cuda {

struct CudnnApi {
  decltype(&cudnnGetVersion) get_version;
  decltype(&cudnnGetErrorString) error_string;
  decltype(&cudnnCreate) create;
  decltype(&cudnnDestroy) destroy;
  decltype(&cudnnSetStream) set_stream;
  decltype(&cudnnCreateTensorDescriptor) create_tensor;
  decltype(&cudnnSetTensor4dDescriptor) set_tensor_4d;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor;
  decltype(&cudnnCreateFilterDescriptor) create_filter;
  decltype(&cudnnSetFilter4dDescriptor) set_filter_4d;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter;
  decltype(&cudnnCreateConvolutionDescriptor) create_convolution;
  decltype(&cudnnSetConvolution2dDescriptor) set_convolution_2d;
  decltype(&cudnnSetConvolutionMathType) set_math_type;
  decltype(&cudnnGetConvolution2dForwardOutputDim) forward_output_dim;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_convolution;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) forward_algorithms;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) backward_data_algorithms;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) backward_filter_algorithms;
  decltype(&cudnnConvolutionForward) forward;
  decltype(&cudnnConvolutionBackwardData) backward_data;
  decltype(&cudnnConvolutionBackwardFilter) backward_filter;

  std::string path;     // the file that was loaded
  std::size_t version;  // cudnnGetVersion(): major * 10000 + minor * 100 + patch
};

// Loads cuDNN on the first call (once per process, thread-safe; later calls return the same answer) and logs which
// file and version. Null, with the reason logged once, where no cuDNN of the right major version loads: the
// backend then keeps im2col + gemm. Throws Error(kMissingDependency) only when PSTRAIN_CUDNN_LIBRARY names a file
// that does not load (an explicit request is not silently replaced).
const CudnnApi* cudnn_api();

// "cuDNN 9.19.0 (/usr/local/cuda/lib64/libcudnn.so.9)", or the reason there is none ("cuDNN: none (...)").
std::string cudnn_description();

}  // namespace pstrain::compute::cuda
