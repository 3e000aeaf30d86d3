#include "workloads/moe_train/precision/accumulate.hpp"

#include <algorithm>
#include <vector>

#include "backends/cpu/gemm.hpp"
#include "util/simd.hpp"

#ifdef MLSB_SIMD_X86
#include <immintrin.h>
#endif

namespace mlsb::moe_train::precision {
namespace {

constexpr uint32_t kTruncateMask = ~((1u << (24 - kLimitedBits)) - 1u);

// x with its fraction cut to kLimitedBits - 1 bits, toward zero.
float truncated(float x) { return formats::u2f(formats::f2u(x) & kTruncateMask); }

// kRows output rows at a time, so that each row of B loaded serves all of them.
constexpr int64_t kRows = 4;

// part[r][j] = truncated(part[r][j] + a[r] * b[j]) for the kRows rows of part (each n long): the portable loop,
// and the AVX2 one (a multiplication then an addition, unfused, as the portable loop compiles without FMA).
void accumulate_rows_portable(const float* a, const float* b, int64_t n, float* part) {
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t j = 0; j < n; ++j) part[r * n + j] = truncated(part[r * n + j] + a[r] * b[j]);
}

#ifdef MLSB_SIMD_X86
MLSB_TARGET_AVX2 void accumulate_rows_avx2(const float* a, const float* b, int64_t n, float* part) {
  const __m256 mask = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kTruncateMask)));
  const __m256 a0 = _mm256_set1_ps(a[0]), a1 = _mm256_set1_ps(a[1]), a2 = _mm256_set1_ps(a[2]),
               a3 = _mm256_set1_ps(a[3]);
  float *p0 = part, *p1 = part + n, *p2 = part + 2 * n, *p3 = part + 3 * n;
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 bj = _mm256_loadu_ps(b + j);
    _mm256_storeu_ps(p0 + j, _mm256_and_ps(_mm256_add_ps(_mm256_loadu_ps(p0 + j), _mm256_mul_ps(a0, bj)), mask));
    _mm256_storeu_ps(p1 + j, _mm256_and_ps(_mm256_add_ps(_mm256_loadu_ps(p1 + j), _mm256_mul_ps(a1, bj)), mask));
    _mm256_storeu_ps(p2 + j, _mm256_and_ps(_mm256_add_ps(_mm256_loadu_ps(p2 + j), _mm256_mul_ps(a2, bj)), mask));
    _mm256_storeu_ps(p3 + j, _mm256_and_ps(_mm256_add_ps(_mm256_loadu_ps(p3 + j), _mm256_mul_ps(a3, bj)), mask));
  }
  for (; j < n; ++j)
    for (int64_t r = 0; r < kRows; ++r) part[r * n + j] = truncated(part[r * n + j] + a[r] * b[j]);
}
#endif

void accumulate_rows(const float* a, const float* b, int64_t n, float* part) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return accumulate_rows_avx2(a, b, n, part);
#endif
  accumulate_rows_portable(a, b, n, part);
}

}  // namespace

void gemm_accumulate(Accumulate mode, const float* a, const float* b, int64_t m, int64_t n, int64_t k, float beta,
                     float* c, int64_t ldc) {
  if (mode == Accumulate::Fp32) {
    cpu::gemm<float>(false, false, m, n, k, 1.0f, a, k, b, n, beta, c, ldc);
    return;
  }
  const int64_t interval = mode == Accumulate::Promoted ? kPromoteInterval : k;
  std::vector<float> part(static_cast<size_t>(kRows * n)), full(part.size());
  for (int64_t i0 = 0; i0 < m; i0 += kRows) {
    const int64_t rows = std::min(kRows, m - i0);
    std::fill(full.begin(), full.end(), 0.0f);
    for (int64_t k0 = 0; k0 < k; k0 += interval) {
      std::fill(part.begin(), part.end(), 0.0f);
      const int64_t k1 = std::min(k, k0 + interval);
      for (int64_t kk = k0; kk < k1; ++kk) {
        float av[kRows] = {};
        for (int64_t r = 0; r < rows; ++r) av[r] = a[(i0 + r) * k + kk];
        const float* br = b + kk * n;
        accumulate_rows(av, br, n, part.data());
      }
      for (size_t j = 0; j < full.size(); ++j) full[j] += part[j];
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* cr = c + (i0 + r) * ldc;
      const float* fr = full.data() + r * n;
      for (int64_t j = 0; j < n; ++j) cr[j] = beta == 0 ? fr[j] : fr[j] + beta * cr[j];
    }
  }
}

}  // namespace mlsb::moe_train::precision
