// Single-thread SGEMM throughput of the GEMM providers pstrain could use, on the products its CPU trainer runs.
// benchmarks/gemm_providers.sh builds and runs it; benchmarks/README.md says how to read its table.
//
// Every provider computes row-major C = op(A) op(B) with alpha 1 and beta 0, as CpuBackend::gemm asks of
// cblas_sgemm. OpenBLAS, BLIS and oneDNN are opened with dlopen, so a missing library is a column of "n/a" and
// not a build failure. Debian ships libxsmm only as a static library: it is compiled in when WITH_LIBXSMM is
// defined (and -lxsmm -lxsmmnoblas linked).
//
// Usage: gemm_providers [--reps N] [--small-only] [--csv FILE] [--openblas LIB] [--dnnl LIB] [--blis LIB]

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef WITH_LIBXSMM
#include <libxsmm.h>
#endif

namespace {

// ---- the products ------------------------------------------------------------------------------------------

struct Shape {
  std::string label;  // which product of which layer
  bool trans_a;
  bool trans_b;
  int m;
  int n;
  int k;
  bool peak = false;  // the big square whose best rate is the machine's single-core sgemm rate
};

std::string op_name(const Shape& s) {
  return std::string(s.trans_a ? "A^T" : "A") + "*" + (s.trans_b ? "B^T" : "B");
}

// pstrain's dense layer (lib/nn/layers/dense.cc) stores W as [out, in]: forward Y = X W^T, then dW = dY^T X and,
// unless the layer reads the data itself, dX = dY W.
void add_dense(std::vector<Shape>& shapes, const std::string& layer, int batch, int in, int out, bool with_dx) {
  shapes.push_back({layer + " forward", false, true, batch, out, in});
  shapes.push_back({layer + " dW", true, false, out, in, batch});
  if (with_dx) shapes.push_back({layer + " dX", false, false, batch, in, out});
}

const Shape kSquare{"square 1024", false, false, 1024, 1024, 1024, true};

std::vector<Shape> trainer_shapes(bool small_only) {
  std::vector<Shape> shapes;
  const int widths[] = {784, 256, 128, 10};  // the MLP 784-256-128-10
  for (int batch : {64, 256}) {
    for (int layer = 0; layer < 3; ++layer) {
      const std::string name = "MLP b" + std::to_string(batch) + " " + std::to_string(widths[layer]) + "-" +
                               std::to_string(widths[layer + 1]);
      add_dense(shapes, name, batch, widths[layer], widths[layer + 1], layer > 0);
    }
  }
  if (small_only) return shapes;
  // NPLM (examples/brown-nplm.ini), batch 128: the two dense layers onto the 14114 words, from the tanh hidden
  // layer (50) and from the direct connections (4 context words x 60 = 240).
  for (int in : {50, 240}) add_dense(shapes, "NPLM b128 " + std::to_string(in) + "-14114", 128, in, 14114, true);
  // CNN (--conv-filters 32,64 --kernel-size 3, Fashion-MNIST), batch 64: the second convolution's forward
  // product (lib/nn/layers/conv2d.cc), im2col rows for 14x14 pixels (after the 2x2 pool), K = 3x3x32, 64 filters.
  shapes.push_back({"CNN b64 conv2 forward", false, true, 64 * 14 * 14, 64, 3 * 3 * 32});
  shapes.push_back(kSquare);
  return shapes;
}

// ---- the providers -------------------------------------------------------------------------------------------

// One product bound to one shape: false when the library reports an error.
using Gemm = std::function<bool(const float* a, const float* b, float* c)>;

struct Provider {
  std::string name;                        // the table's column
  std::string about;                       // library, version, kernels, threads; or why it is not loaded
  std::function<Gemm(const Shape&)> bind;  // empty when not loaded; returns an empty Gemm where it has no kernel
};

Provider missing(const std::string& name, const std::string& why) {
  std::cerr << "[gemm] " << name << ": not loaded: " << why << "\n";
  return {name, "not loaded: " + why, {}};
}

template <typename Function>
Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(dlsym(library, name));
}

// Sets (or, for a null value, unsets) an environment variable until the end of the scope.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedVariable() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

void* open_library(const std::string& file, std::string& error) {
  // DEEPBIND: OpenBLAS and BLIS both export sgemm_ and cblas_sgemm, and each must call its own.
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (library == nullptr) error = dlerror();
  return library;
}

std::string file_of(void* library) {
  link_map* map = nullptr;
  return dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 ? map->l_name : "";
}

// The loader hands out one copy of a file per process, and OpenBLAS and BLIS choose their kernels once per copy:
// a private copy of the file is a second, independent library.
void* open_private_copy(const std::string& file, std::string& error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp != nullptr ? tmp : "/tmp") + "/gemm-providers-XXXXXX";
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    error = "cannot create a copy of " + file + " in " + name;
    return nullptr;
  }
  close(fd);
  std::filesystem::copy_file(file, name, std::filesystem::copy_options::overwrite_existing);
  void* library = open_library(name, error);
  std::filesystem::remove(name);  // the mapping outlives the file
  return library;
}

struct Opened {
  void* handle = nullptr;  // null when it could not be opened
  std::string file;        // the library's file (of which a variant is a copy)
};

// Opens `library` with `variable` set to `value` while it loads and `initialise` runs; a null value unsets it,
// leaving the kernel choice to the library. Open the null-value variant of a library first: it is the library
// itself, the others are copies.
Opened open_variant(const std::string& library, const char* variable, const char* value, void (*initialise)(void*),
                    std::string& error) {
  Opened opened;
  {
    ScopedVariable unset(variable, nullptr);
    opened.handle = open_library(library, error);
    if (opened.handle == nullptr) return opened;
    opened.file = file_of(opened.handle);
    if (value == nullptr) {
      if (initialise != nullptr) initialise(opened.handle);
      return opened;
    }
  }
  ScopedVariable set(variable, value);
  opened.handle = open_private_copy(opened.file, error);
  if (opened.handle != nullptr && initialise != nullptr) initialise(opened.handle);
  return opened;
}

// CBLAS, as OpenBLAS and BLIS (32-bit integers) export it; the enum values are the CBLAS standard's.
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*,
                            int);
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;

Gemm cblas_gemm(CblasSgemm sgemm, const Shape& s) {
  const int lda = s.trans_a ? s.m : s.k;  // row-major: the stored row lengths, as in CpuBackend::gemm
  const int ldb = s.trans_b ? s.k : s.n;
  return [=](const float* a, const float* b, float* c) {
    sgemm(kCblasRowMajor, s.trans_a ? kCblasTrans : kCblasNoTrans, s.trans_b ? kCblasTrans : kCblasNoTrans, s.m, s.n,
          s.k, 1.0f, a, lda, b, ldb, 0.0f, c, s.n);
    return true;
  };
}

// core: an OPENBLAS_CORETYPE value, or null for OpenBLAS's own choice.
Provider openblas(const std::string& library, const char* core) {
  const std::string name = core != nullptr ? std::string("OpenBLAS ") + core : "OpenBLAS";
  std::string error;
  const Opened opened = open_variant(library, "OPENBLAS_CORETYPE", core, nullptr, error);
  void* handle = opened.handle;
  if (handle == nullptr) return missing(name, error);
  auto sgemm = symbol<CblasSgemm>(handle, "cblas_sgemm");
  auto config = symbol<const char* (*)()>(handle, "openblas_get_config");
  auto corename = symbol<const char* (*)()>(handle, "openblas_get_corename");
  auto set_threads = symbol<void (*)(int)>(handle, "openblas_set_num_threads");
  auto threads = symbol<int (*)()>(handle, "openblas_get_num_threads");
  if (!sgemm || !config || !corename || !set_threads || !threads) return missing(name, library + " is not OpenBLAS");
  set_threads(1);
  const std::string about = std::string(config()) + " (" + opened.file + "), cblas_sgemm; kernels " + corename() +
                            ", " + std::to_string(threads()) + " thread(s)";
  return {name, about, [sgemm](const Shape& s) { return cblas_gemm(sgemm, s); }};
}

// arch_id: a BLIS_ARCH_TYPE value (an index into BLIS's arch_t), or null for BLIS's own choice.
Provider blis(const std::string& library, const char* arch_id, const std::string& name) {
  // BLIS reads BLIS_ARCH_TYPE at its first query of the architecture, not when it is loaded; in BLIS 0.9 that query
  // must follow bli_init, which registers the architectures (before it, any BLIS_ARCH_TYPE aborts).
  auto query_arch = [](void* handle) {
    auto init = symbol<void (*)()>(handle, "bli_init");
    auto query = symbol<int (*)()>(handle, "bli_arch_query_id");
    if (init && query) {
      init();
      query();
    }
  };
  std::string error;
  const Opened opened = open_variant(library, "BLIS_ARCH_TYPE", arch_id, query_arch, error);
  void* handle = opened.handle;
  if (handle == nullptr) return missing(name, error);
  auto sgemm = symbol<CblasSgemm>(handle, "cblas_sgemm");
  auto version = symbol<const char* (*)()>(handle, "bli_info_get_version_str");
  auto arch = symbol<int (*)()>(handle, "bli_arch_query_id");
  auto arch_name = symbol<const char* (*)(int)>(handle, "bli_arch_string");
  auto threading = symbol<std::int64_t (*)()>(handle, "bli_info_get_enable_threading");
  auto threads = symbol<std::int64_t (*)()>(handle, "bli_thread_get_num_threads");
  if (!sgemm || !version || !arch || !arch_name || !threading || !threads) {
    return missing(name, library + " is not BLIS with its CBLAS interface");
  }
  const std::string threads_used =
      threading() != 0 ? std::to_string(threads()) + " thread(s) (BLIS_NUM_THREADS)" : "built without threading";
  const std::string about = "BLIS " + std::string(version()) + " (" + opened.file + "), cblas_sgemm; kernels " +
                            arch_name(arch()) + ", " + threads_used;
  return {name, about, [sgemm](const Shape& s) { return cblas_gemm(sgemm, s); }};
}

// oneDNN's C API (dnnl.h): row-major, 64-bit sizes, a dnnl_status_t (0: success).
using DnnlSgemm = int (*)(char, char, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t);
struct DnnlVersion {  // dnnl_version_t
  int major;
  int minor;
  int patch;
  const char* hash;
  unsigned cpu_runtime;
  unsigned gpu_runtime;
};

std::string dnnl_isa_name(int isa) {  // the dnnl_cpu_isa_t values of dnnl_types.h (oneDNN 2.x)
  static const std::map<int, std::string> names = {{0x7, "avx2"},
                                                   {0x27, "avx512_core"},
                                                   {0x67, "avx512_core_vnni"},
                                                   {0xe7, "avx512_core_bf16"},
                                                   {0x3e7, "avx512_core_amx"}};
  const auto found = names.find(isa);
  if (found != names.end()) return found->second;
  std::ostringstream hex;
  hex << "isa 0x" << std::hex << isa;
  return hex.str();
}

Provider dnnl(const std::string& library) {
  const std::string name = "oneDNN";
  std::string error;
  void* handle = open_library(library, error);
  if (handle == nullptr) return missing(name, error);
  auto sgemm = symbol<DnnlSgemm>(handle, "dnnl_sgemm");
  auto version = symbol<const DnnlVersion* (*)()>(handle, "dnnl_version");
  auto isa = symbol<int (*)()>(handle, "dnnl_get_effective_cpu_isa");
  // Debian's oneDNN runs on OpenMP: libgomp, found among the library's dependencies, read OMP_NUM_THREADS when it
  // was loaded.
  auto omp_threads = symbol<int (*)()>(handle, "omp_get_max_threads");
  if (!sgemm || !version || !isa || !omp_threads) return missing(name, library + " is not oneDNN 2.x");
  const DnnlVersion* v = version();
  const std::string about = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                            std::to_string(v->patch) + " (" + file_of(handle) + "), dnnl_sgemm; effective ISA " +
                            dnnl_isa_name(isa()) + ", OpenMP, " + std::to_string(omp_threads()) + " thread(s)";
  auto bind = [sgemm](const Shape& s) -> Gemm {
    const std::int64_t lda = s.trans_a ? s.m : s.k;
    const std::int64_t ldb = s.trans_b ? s.k : s.n;
    return [=](const float* a, const float* b, float* c) {
      return sgemm(s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a, lda, b, ldb, 0.0f, c, s.n) ==
             0;
    };
  };
  return {name, about, bind};
}

#ifdef WITH_LIBXSMM
// libxsmm is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, the same buffers with
// A and B swapped. libxsmm 1.17's JIT kernels cannot transpose their first operand (libxsmm_smmdispatch returns
// null), so the row-major products with a transposed B, every forward product, get no kernel.
Provider libxsmm() {
  const std::string about = std::string("libxsmm ") + LIBXSMM_VERSION +
                            " (static), libxsmm_smmdispatch JIT kernels for " + libxsmm_get_target_arch();
  auto bind = [](const Shape& s) -> Gemm {
    const libxsmm_blasint lda = s.trans_b ? s.k : s.n;
    const libxsmm_blasint ldb = s.trans_a ? s.m : s.k;
    const libxsmm_blasint ldc = s.n;
    const int flags = (s.trans_b ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (s.trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const libxsmm_smmfunction kernel =
        libxsmm_smmdispatch(s.n, s.m, s.k, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
    if (kernel == nullptr) return {};
    return [kernel](const float* a, const float* b, float* c) {
      kernel(b, a, c);
      return true;
    };
  };
  return {"libxsmm", about, bind};
}
#else
Provider libxsmm() {
  return missing("libxsmm", "not compiled in (built without WITH_LIBXSMM)");
}
#endif

// ---- measuring -------------------------------------------------------------------------------------------------

constexpr double kRepetitionSeconds = 0.02;  // each timed repetition repeats the product for at least this long

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Floats = std::unique_ptr<float[], FreeDeleter>;

// 64-byte aligned (a cache line, one AVX-512 register), as a large allocation would be.
Floats make_floats(std::size_t count) {
  const std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  Floats floats(static_cast<float*>(std::aligned_alloc(64, bytes)));
  if (!floats) throw std::bad_alloc();
  return floats;
}

Floats random_floats(std::size_t count, unsigned seed) {
  Floats floats = make_floats(count);
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (std::size_t i = 0; i < count; ++i) floats[i] = uniform(generator);
  return floats;
}

enum class State { kNotLoaded, kNoKernel, kError, kMeasured };

struct Result {
  State state = State::kNotLoaded;
  int calls = 0;               // products per timed repetition
  std::vector<double> gflops;  // one per timed repetition, in order
  bool identical = false;      // C bit for bit as the reference's
  double difference = 0.0;     // max |C - C_ref| / max |C_ref| (NaN when C holds a NaN)
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 == 1 ? values[half] : (values[half - 1] + values[half]) / 2.0;
}

double seconds_for(const Gemm& gemm, const float* a, const float* b, float* c, int calls, bool& ok) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) ok = gemm(a, b, c) && ok;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void compare(const float* c, const float* reference, std::size_t count, Result& result) {
  result.identical = std::memcmp(c, reference, count * sizeof(float)) == 0;
  double largest = 0.0;
  double worst = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    if (std::isnan(c[i])) {
      result.difference = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    largest = std::max(largest, std::fabs(static_cast<double>(reference[i])));
    worst = std::max(worst, std::fabs(static_cast<double>(c[i]) - reference[i]));
  }
  result.difference = largest > 0.0 ? worst / largest : worst;
}

// Every provider's product on the same inputs; `reference` (an index into providers, or -1) is compared against.
// The timed repetitions go round the providers, one repetition each per round, the first one moving on by one each
// round, so that a noisy neighbour slows them all alike.
std::vector<Result> measure(const Shape& s, const std::vector<Provider>& providers, int reps, int reference) {
  const std::size_t count_a = static_cast<std::size_t>(s.m) * s.k;
  const std::size_t count_b = static_cast<std::size_t>(s.k) * s.n;
  const std::size_t count_c = static_cast<std::size_t>(s.m) * s.n;
  const Floats a = random_floats(count_a, 1);
  const Floats b = random_floats(count_b, 2);
  const std::size_t n = providers.size();
  std::vector<Result> results(n);
  std::vector<Gemm> gemms(n);
  std::vector<Floats> outputs(n);
  for (std::size_t p = 0; p < n; ++p) {
    if (!providers[p].bind) continue;
    gemms[p] = providers[p].bind(s);
    if (!gemms[p]) {
      results[p].state = State::kNoKernel;
      continue;
    }
    outputs[p] = make_floats(count_c);
    // beta = 0 must overwrite C, whatever it holds (pstrain's buffers are not cleared): start from NaN.
    std::fill_n(outputs[p].get(), count_c, std::numeric_limits<float>::quiet_NaN());
    bool ok = gemms[p](a.get(), b.get(), outputs[p].get());
    const double one_call = seconds_for(gemms[p], a.get(), b.get(), outputs[p].get(), 1, ok);
    results[p].calls = std::max(1, static_cast<int>(std::ceil(kRepetitionSeconds / std::max(one_call, 1e-9))));
    seconds_for(gemms[p], a.get(), b.get(), outputs[p].get(), results[p].calls, ok);  // warm-up
    results[p].state = ok ? State::kMeasured : State::kError;
  }
  for (std::size_t p = 0; p < n; ++p) {
    if (reference >= 0 && results[p].state == State::kMeasured && results[reference].state == State::kMeasured) {
      compare(outputs[p].get(), outputs[reference].get(), count_c, results[p]);
    }
  }
  const double flop = 2.0 * s.m * s.n * s.k;
  for (int round = 0; round < reps; ++round) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t p = (round + i) % n;
      Result& result = results[p];
      if (result.state != State::kMeasured) continue;
      bool ok = true;
      const double seconds = seconds_for(gemms[p], a.get(), b.get(), outputs[p].get(), result.calls, ok);
      if (!ok) result.state = State::kError;
      result.gflops.push_back(flop * result.calls / seconds / 1e9);
    }
  }
  return results;
}

// ---- reporting -------------------------------------------------------------------------------------------------

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(digits);
  out << value;
  return out.str();
}

std::string scientific(double value) {
  std::ostringstream out;
  out.setf(std::ios::scientific);
  out.precision(1);
  out << value;
  return out.str();
}

std::string cell(const Result& result, bool is_reference, bool fastest) {
  switch (result.state) {
    case State::kNotLoaded: return "n/a";
    case State::kNoKernel: return "no kernel";
    case State::kError: return "error";
    case State::kMeasured: break;
  }
  std::string rate = fixed(median(result.gflops), 1);
  if (fastest) rate = "**" + rate + "**";
  if (is_reference) return rate + " ref";
  if (result.identical) return rate + " =";
  return rate + " (" + scientific(result.difference) + ")";
}

int fastest_of(const std::vector<Result>& results) {
  int best = -1;
  for (std::size_t p = 0; p < results.size(); ++p) {
    if (results[p].state != State::kMeasured) continue;
    if (best < 0 || median(results[p].gflops) > median(results[best].gflops)) best = static_cast<int>(p);
  }
  return best;
}

void print_table(std::ostream& out, const std::vector<Shape>& shapes, const std::vector<Provider>& providers,
                 const std::vector<std::vector<Result>>& results, int reference, int reps) {
  out << "Single-thread SGEMM, row-major, GFLOP/s: median of " << reps << " timed repetitions (each at least "
      << kRepetitionSeconds * 1e3 << " ms of back-to-back products on the same operands), providers alternating.\n\n";
  out << "| product | M x N x K | op |";
  for (const Provider& p : providers) out << " " << p.name << " |";
  out << "\n|---|---|---|";
  for (std::size_t p = 0; p < providers.size(); ++p) out << "---:|";
  out << "\n";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    const int best = fastest_of(results[i]);
    out << "| " << s.label << " | " << s.m << " x " << s.n << " x " << s.k << " | " << op_name(s) << " |";
    for (std::size_t p = 0; p < providers.size(); ++p) {
      out << " " << cell(results[i][p], static_cast<int>(p) == reference, static_cast<int>(p) == best) << " |";
    }
    out << "\n";
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const int best = fastest_of(results[i]);
    if (shapes[i].peak && best >= 0) {
      out << "\nMachine's single-core sgemm rate (1024^3, best provider): " << fixed(median(results[i][best].gflops), 1)
          << " GFLOP/s (" << providers[best].name << ")\n";
    }
  }
  out << "\n**bold**: the fastest of the row. `ref`: the reference, "
      << (reference >= 0 ? providers[reference].name : std::string("none loaded"))
      << "; `=`: C bit-identical to the reference's; `(x)`: max |C - C_ref| / max |C_ref|. `n/a`: library not loaded; "
         "`no kernel`: the provider has no kernel for this product; `error`: the library reported an error.\n\n";
  out << "Providers:\n";
  for (const Provider& p : providers) out << "- " << p.name << ": " << p.about << "\n";
}

void write_csv(const std::string& file, const std::vector<Shape>& shapes, const std::vector<Provider>& providers,
               const std::vector<std::vector<Result>>& results) {
  std::ofstream out(file);
  if (!out) throw std::runtime_error("cannot write " + file);
  out << "product,m,n,k,op,provider,state,calls_per_rep,median_gflops,min_gflops,max_gflops,identical,max_rel_diff\n";
  static const char* const states[] = {"not_loaded", "no_kernel", "error", "measured"};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    for (std::size_t p = 0; p < providers.size(); ++p) {
      const Result& r = results[i][p];
      out << s.label << "," << s.m << "," << s.n << "," << s.k << "," << op_name(s) << "," << providers[p].name << ","
          << states[static_cast<int>(r.state)] << "," << r.calls << ",";
      if (r.state == State::kMeasured) {
        const auto [low, high] = std::minmax_element(r.gflops.begin(), r.gflops.end());
        out << median(r.gflops) << "," << *low << "," << *high << "," << r.identical << "," << r.difference;
      } else {
        out << ",,,,";
      }
      out << "\n";
    }
  }
}

// ---- main ------------------------------------------------------------------------------------------------------

struct Options {
  int reps = 9;
  bool small_only = false;
  bool peak_only = false;  // the 1024^3 square alone: the machine's single-core rate (speed_report.sh)
  std::string csv;
  std::string openblas = "libopenblas.so.0";
  std::string dnnl = "libdnnl.so.2";
  std::string blis = "libblis.so.4";
};

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--reps") {
      options.reps = std::stoi(value());
      if (options.reps < 1) throw std::invalid_argument("--reps must be at least 1");
    } else if (flag == "--small-only") {
      options.small_only = true;
    } else if (flag == "--peak-only") {
      options.peak_only = true;
    } else if (flag == "--csv") {
      options.csv = value();
    } else if (flag == "--openblas") {
      options.openblas = value();
    } else if (flag == "--dnnl") {
      options.dnnl = value();
    } else if (flag == "--blis") {
      options.blis = value();
    } else {
      throw std::invalid_argument(
          "unknown flag " + flag +
          " (flags: --reps N --small-only --peak-only --csv FILE --openblas LIB --dnnl LIB --blis LIB)");
    }
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse(argc, argv);
    // One thread is what is measured. The libraries read these when they load (libgomp, OpenBLAS) or first run
    // (BLIS), so they are set before any of them is opened.
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    setenv("BLIS_NUM_THREADS", "1", 1);
    std::vector<Provider> providers;
    providers.push_back(openblas(options.openblas, nullptr));  // first: the library itself, the others copies
    providers.push_back(openblas(options.openblas, "SkylakeX"));
    providers.push_back(openblas(options.openblas, "Cooperlake"));
    providers.push_back(dnnl(options.dnnl));
    providers.push_back(blis(options.blis, nullptr, "BLIS"));
    providers.push_back(blis(options.blis, "0", "BLIS skx"));  // 0: BLIS_ARCH_SKX, the first arch_t
    providers.push_back(libxsmm());
    constexpr int kSkylakeX = 1;
    const int reference = providers[kSkylakeX].bind ? kSkylakeX : -1;

    const std::vector<Shape> shapes =
        options.peak_only ? std::vector<Shape>{kSquare} : trainer_shapes(options.small_only);
    std::vector<std::vector<Result>> results;
    for (const Shape& s : shapes) {
      std::cerr << "[gemm] " << s.label << " (" << s.m << " x " << s.n << " x " << s.k << ")\n";
      results.push_back(measure(s, providers, options.reps, reference));
    }
    print_table(std::cout, shapes, providers, results, reference, options.reps);
    if (!options.csv.empty()) write_csv(options.csv, shapes, providers, results);
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "gemm_providers: " << error.what() << "\n";
    return 1;
  }
}
