#pragma once
// Row-major GEMM on the CPU through OpenBLAS (cblas), for float and double.
#include <cstdint>

namespace mlsb::cpu {

/// C[m,n] = alpha * op(A) * op(B) + beta * C, row-major; op(A) is [m,k] (A is [k,m] when trans_a),
/// op(B) is [k,n] (B is [n,k] when trans_b). Leading dimensions are the stored row lengths.
/// T is float (sgemm) or double (dgemm). Any of m, n, k may be 0 (then only C's beta scaling applies).
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

/// The same with packed leading dimensions (lda = trans_a ? m : k, ldb = trans_b ? k : n, ldc = n).
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T beta, T* c) {
  gemm<T>(trans_a, trans_b, m, n, k, T(1), a, trans_a ? m : k, b, trans_b ? k : n, beta, c, n);
}

/// Sets OpenBLAS's thread count for the calling process (1 = the caller's thread alone).
void set_blas_threads(int threads);

}  // namespace mlsb::cpu
