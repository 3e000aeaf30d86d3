#include "backends/cpu/gemm.hpp"

#include <cblas.h>

namespace mlsb::cpu {
namespace {

int to_int(int64_t v) { return static_cast<int>(v); }

}  // namespace

template <>
void gemm<float>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, to_int(m), to_int(n),
              to_int(k), alpha, a, to_int(lda), b, to_int(ldb), beta, c, to_int(ldc));
}

template <>
void gemm<double>(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                  const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, to_int(m), to_int(n),
              to_int(k), alpha, a, to_int(lda), b, to_int(ldb), beta, c, to_int(ldc));
}

void set_blas_threads(int threads) { openblas_set_num_threads(threads < 1 ? 1 : threads); }

}  // namespace mlsb::cpu
