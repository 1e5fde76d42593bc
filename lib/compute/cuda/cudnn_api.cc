#include "compute/cuda/cudnn_api.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compute/cuda/cudnn_check.h"
#include "core/error.h"
#include "core/log.h"
#include "core/shared_library.h"

namespace pstrain::compute::cuda {

namespace {

// libcudnn.so.9: the major version of the headers this build was made with.
std::string file_name() {
  return cat("libcudnn.so.", CUDNN_MAJOR);
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// Every match of `pattern`, sorted (glob's order), so the same machine always gives the same list.
std::vector<std::string> matches(const std::string& pattern) {
  glob_t found{};
  std::vector<std::string> paths;
  if (glob(pattern.c_str(), 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) paths.emplace_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return paths;
}

// Where PyTorch's wheel (nvidia-cudnn-cu13) puts cuDNN under a Python prefix.
std::vector<std::string> pytorch_copies() {
  std::vector<std::string> prefixes;
  for (const char* variable : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (const std::string prefix = environment(variable); !prefix.empty()) prefixes.push_back(prefix);
  }
  for (const char* prefix : {"/usr/local", "/usr", "/opt/conda"}) prefixes.emplace_back(prefix);
  if (const std::string home = environment("HOME"); !home.empty()) prefixes.push_back(home + "/.local");
  std::vector<std::string> paths;
  for (const std::string& prefix : prefixes) {
    for (const char* packages : {"site-packages", "dist-packages"}) {
      for (std::string& path : matches(cat(prefix, "/lib/python3*/", packages, "/nvidia/cudnn/lib/", file_name()))) {
        paths.push_back(std::move(path));
      }
    }
  }
  return paths;
}

std::vector<std::string> candidates() {
  std::vector<std::string> paths{file_name()};  // the dynamic linker's own search first
  for (const char* folder : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib", "/usr/lib/x86_64-linux-gnu"}) {
    paths.push_back(std::string(folder) + "/" + file_name());
  }
  for (std::string& path : pytorch_copies()) paths.push_back(std::move(path));
  return paths;
}

template <typename Function>
void take(const SharedLibrary& library, Function& target, const char* name) {
  target = library.function<Function>(name);
}

CudnnApi resolve(const SharedLibrary& library) {
  CudnnApi api{};
  take(library, api.get_version, "cudnnGetVersion");
  take(library, api.error_string, "cudnnGetErrorString");
  take(library, api.create, "cudnnCreate");
  take(library, api.destroy, "cudnnDestroy");
  take(library, api.set_stream, "cudnnSetStream");
  take(library, api.create_tensor, "cudnnCreateTensorDescriptor");
  take(library, api.set_tensor_4d, "cudnnSetTensor4dDescriptor");
  take(library, api.destroy_tensor, "cudnnDestroyTensorDescriptor");
  take(library, api.create_filter, "cudnnCreateFilterDescriptor");
  take(library, api.set_filter_4d, "cudnnSetFilter4dDescriptor");
  take(library, api.destroy_filter, "cudnnDestroyFilterDescriptor");
  take(library, api.create_convolution, "cudnnCreateConvolutionDescriptor");
  take(library, api.set_convolution_2d, "cudnnSetConvolution2dDescriptor");
  take(library, api.set_math_type, "cudnnSetConvolutionMathType");
  take(library, api.forward_output_dim, "cudnnGetConvolution2dForwardOutputDim");
  take(library, api.destroy_convolution, "cudnnDestroyConvolutionDescriptor");
  take(library, api.forward_algorithms, "cudnnGetConvolutionForwardAlgorithm_v7");
  take(library, api.backward_data_algorithms, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  take(library, api.backward_filter_algorithms, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  take(library, api.forward, "cudnnConvolutionForward");
  take(library, api.backward_data, "cudnnConvolutionBackwardData");
  take(library, api.backward_filter, "cudnnConvolutionBackwardFilter");
  api.path = library.soname();
  api.version = api.get_version();
  return api;
}

// The file the loader actually mapped for a bare soname (the one the log should name).
std::string loaded_file(void* function, const std::string& fallback) {
  Dl_info info{};
  if (dladdr(function, &info) != 0 && info.dli_fname != nullptr) {
    return std::filesystem::weakly_canonical(info.dli_fname).string();
  }
  return fallback;
}

struct Loaded {
  std::unique_ptr<SharedLibrary> library;  // kept open to the end of the process
  std::unique_ptr<CudnnApi> api;
  std::string description;
};

// Tries one file: the loaded API, or null with the reason in `reasons`.
std::unique_ptr<CudnnApi> try_load(const std::string& path, Loaded& loaded, std::string& reasons) {
  try {
    auto library = std::make_unique<SharedLibrary>(path, "tried as cuDNN");
    auto api = std::make_unique<CudnnApi>(resolve(*library));
    if (api->version / 10000 != CUDNN_MAJOR) {
      reasons += cat("; ", path, " is cuDNN ", api->version, ", not major ", CUDNN_MAJOR);
      return nullptr;
    }
    api->path = loaded_file(reinterpret_cast<void*>(api->get_version), path);
    loaded.library = std::move(library);
    return api;
  } catch (const Error& failure) {
    reasons += cat("; ", failure.what());
    return nullptr;
  }
}

Loaded load() {
  Loaded loaded;
  std::string reasons;
  const std::string requested = environment("PSTRAIN_CUDNN_LIBRARY");
  if (requested == "none") {
    loaded.description = "cuDNN: none (PSTRAIN_CUDNN_LIBRARY=none)";
  } else if (!requested.empty()) {
    const std::string path = std::filesystem::is_directory(requested) ? requested + "/" + file_name() : requested;
    loaded.api = try_load(path, loaded, reasons);
    if (!loaded.api) {
      throw Error(ExitCode::kMissingDependency,
                  cat("PSTRAIN_CUDNN_LIBRARY=", requested, " does not give a usable cuDNN ", CUDNN_MAJOR, reasons,
                      " (unset it to search the usual places, or set it to none to run without cuDNN)"));
    }
  } else {
    for (const std::string& path : candidates()) {
      if ((loaded.api = try_load(path, loaded, reasons))) break;
    }
    if (!loaded.api) loaded.description = cat("cuDNN: none found (", reasons.substr(2), ")");
  }
  if (loaded.api) {
    const std::size_t v = loaded.api->version;
    loaded.description = cat("cuDNN ", v / 10000, ".", v / 100 % 100, ".", v % 100, " (", loaded.api->path, ")");
  }
  log_info(loaded.description, loaded.api ? "" : ": convolutions run as im2col + gemm");
  return loaded;
}

const Loaded& loaded() {
  static const Loaded instance = load();
  return instance;
}

}  // namespace

const CudnnApi* cudnn_api() {
  return loaded().api.get();
}

std::string cudnn_description() {
  return loaded().description;
}

void throw_cudnn_error(int status, const char* call, const char* file, int line) {
  const CudnnApi* api = cudnn_api();
  const char* text = api != nullptr ? api->error_string(static_cast<cudnnStatus_t>(status)) : "cuDNN not loaded";
  throw Error(ExitCode::kInternal,
              cat("cuDNN call ", call, " failed at ", file, ":", line, ": ", text, " (status ", status, ")"));
}

}  // namespace pstrain::compute::cuda
