#include "compute/cpu/onednn_gemm.h"

#include <dnnl.h>

#include "core/error.h"

namespace pstrain::compute {

namespace {

constexpr int kLongestSum = 256;
constexpr long kSmallestProduct = 4096;

}  // namespace

bool prefers_onednn_sgemm(int m, int n, int k) {
  return k <= kLongestSum && static_cast<long>(m) * n >= kSmallestProduct;
}

std::string onednn_sgemm_description() {
  const dnnl_version_t* version = dnnl_version();
  return cat("products summing at most ", kLongestSum, " terms, of ", kSmallestProduct, " or more elements, on oneDNN ",
             version->major, ".", version->minor, ".", version->patch, " sgemm");
}

void onednn_sgemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc) {
  const dnnl_status_t status =
      dnnl_sgemm(transpose_a ? 'T' : 'N', transpose_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  PSTRAIN_ASSERT(status == dnnl_success, "oneDNN sgemm failed (status ", static_cast<int>(status), ") for m=", m,
                 " n=", n, " k=", k);
}

}  // namespace pstrain::compute
