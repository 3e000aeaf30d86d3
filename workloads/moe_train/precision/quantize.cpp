#include "workloads/moe_train/precision/quantize.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "util/simd.hpp"

#ifdef MLSB_SIMD_X86
#include <immintrin.h>
#endif

namespace mlsb::moe_train::precision {
namespace {

using formats::Element;

// |x| for a finite x, 0 for Inf and NaN.
float finite_abs(float x) {
  const uint32_t b = formats::f2u(x) & 0x7FFFFFFFu;
  return b < 0x7F800000u ? formats::u2f(b) : 0.0f;
}

// A counter-based 32-bit hash (Wellons' "lowbias32"): the stochastic rounding bits of element `index`.
uint32_t mix32(uint32_t x) {
  x ^= x >> 16, x *= 0x7feb352du;
  x ^= x >> 15, x *= 0x846ca68bu;
  return x ^ (x >> 16);
}

// A tile's encode and decode multipliers: x -> q(x * enc) * dec.
struct TileScale {
  float enc = 1, dec = 1;
};

// max / amax, kept finite (a tile of fp32 subnormals would overflow it); 1 for an all-zero tile.
TileScale amax_scale(float amax, float max) {
  if (!(amax > 0)) return {};
  const float s = std::min(max / amax, FLT_MAX);
  return {s, 1.0f / s};
}

TileScale tile_scale(const OperandFormat& f, float amax, float tensor_scale, float nv_tensor) {
  const formats::ElementSpec spec = formats::element_spec(f.element);
  switch (f.scaling) {
    case Scaling::TensorDelayed: return {tensor_scale, 1.0f / tensor_scale};
    case Scaling::Mx: {
      const int e = static_cast<int>(formats::mx_scale_e8m0(amax, spec.emax)) - 127;
      return {std::ldexp(1.0f, -e), std::ldexp(1.0f, e)};
    }
    case Scaling::Nvfp4: {
      const float d = formats::fake_round(Element::E4M3, amax / spec.max * nv_tensor);
      if (d == 0) return {0, 0};
      return {nv_tensor / d, d / nv_tensor};
    }
    default: return amax_scale(amax, spec.max);  // TensorCurrent, Block
  }
}

// Saturated values: those that round beyond the element's max (to nearest even), not those the fp32 rounding of
// a scale puts a hair above it. They start at the midpoint to the next value up, included when max's code is odd
// (e4m3: above 464; e5m2: from 61440; e2m1: from 7); the bound returned is the largest magnitude not saturated.
float saturation_bound(const formats::ElementSpec& spec) {
  const float step = std::ldexp(1.0f, formats::floor_log2(spec.max) - spec.mantissa);
  const float midpoint = spec.max + step / 2;
  const bool odd = static_cast<int64_t>(spec.max / step) % 2 != 0;
  return odd ? std::nextafter(midpoint, 0.0f) : midpoint;
}

// Bytes of one tile's scale: fp32 (tensor, block), E8M0 (mx), E4M3 (nvfp4).
double scale_bytes(Scaling s) { return s == Scaling::Mx || s == Scaling::Nvfp4 ? 1 : 4; }

// One row under per-column multipliers, counting underflow and saturation: the portable loop (formats::fake_round
// per element), and below it the AVX2 one, the same operations (and the same random bits) on eight lanes.
template <int M, int B, bool SR>
void quantize_row(const float* x, int64_t n, const float* enc, const float* dec, float max, float sat_above, uint32_t seed,
                  uint32_t index0, float* out, QuantCounts& c) {
  int64_t under = 0, sat = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i], v = xi * enc[i];
    const uint32_t random = SR ? mix32(index0 + static_cast<uint32_t>(i) + seed) : 0;
    const float q = formats::fake_round<M, B>(v, SR, random, max);
    out[i] = q * dec[i];
    const bool finite = (formats::f2u(xi) & 0x7FFFFFFFu) < 0x7F800000u;
    under += finite && xi != 0 && q == 0;
    sat += finite && std::fabs(v) > sat_above;
  }
  c.underflow += under, c.saturated += sat;
}

#ifdef MLSB_SIMD_X86
// mix32 on eight lanes.
MLSB_TARGET_AVX2 inline __m256i mix32_avx2(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(static_cast<int>(0x7feb352du)));
  x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
  x = _mm256_mullo_epi32(x, _mm256_set1_epi32(static_cast<int>(0x846ca68bu)));
  return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

template <int M, int B, bool SR>
MLSB_TARGET_AVX2 void quantize_row_avx2(const float* x, int64_t n, const float* enc, const float* dec, float max,
                                        float sat_above, uint32_t seed, uint32_t index0, float* out, QuantCounts& c) {
  constexpr int drop = 23 - M;
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), frac_mask = _mm256_set1_epi32(~((1 << drop) - 1));
  const __m256i half = _mm256_set1_epi32((1 << (drop - 1)) - 1), one = _mm256_set1_epi32(1);
  const __m256i min_normal = _mm256_set1_epi32((127 + 1 - B) << 23), inf = _mm256_set1_epi32(0x7F800000);
  const __m256 big = _mm256_set1_ps(formats::u2f(static_cast<uint32_t>(127 + 1 - B - M + 23) << 23));
  const __m256 maxv = _mm256_set1_ps(max), zero = _mm256_setzero_ps();
  // Stochastic rounding: element i's bits are mix32(index0 + i + seed); below the normal range the value rounds up
  // a step 2^(1-B-M) when the top 24 random bits, as a fraction, fall below its remainder.
  const float step_s = formats::u2f(static_cast<uint32_t>(127 + 1 - B - M) << 23);
  const __m256 step = _mm256_set1_ps(step_s), inv_step = _mm256_set1_ps(1.0f / step_s), one_f = _mm256_set1_ps(1.0f);
  const __m256 below = _mm256_set1_ps(formats::u2f(static_cast<uint32_t>(127 + 1 - B) << 23));
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), low_mask = _mm256_set1_epi32((1 << drop) - 1);
  int64_t under = 0, sat = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xi = _mm256_loadu_ps(x + i), v = _mm256_mul_ps(xi, _mm256_loadu_ps(enc + i));
    const __m256i vb = _mm256_castps_si256(v), abs = _mm256_and_si256(vb, abs_mask);
    const __m256i sign = _mm256_andnot_si256(abs_mask, vb);
    const __m256 a = _mm256_castsi256_ps(abs);
    __m256i inc;
    __m256 sub;
    if constexpr (SR) {
      const __m256i counter = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(index0 + static_cast<uint32_t>(i) + seed)), lanes);
      const __m256i random = mix32_avx2(counter);
      inc = _mm256_and_si256(random, low_mask);
      const __m256 units = _mm256_mul_ps(_mm256_min_ps(a, below), inv_step);
      const __m256 whole = _mm256_round_ps(units, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __m256 frac = _mm256_sub_ps(units, whole);
      const __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(random, 8)), _mm256_set1_ps(0x1p-24f));
      sub = _mm256_mul_ps(_mm256_add_ps(whole, _mm256_and_ps(_mm256_cmp_ps(u, frac, _CMP_LT_OQ), one_f)), step);
    } else {
      inc = _mm256_add_epi32(half, _mm256_and_si256(_mm256_srli_epi32(abs, drop), one));
      sub = _mm256_sub_ps(_mm256_add_ps(a, big), big);
    }
    const __m256 normal = _mm256_castsi256_ps(_mm256_and_si256(_mm256_add_epi32(abs, inc), frac_mask));
    __m256 r = _mm256_blendv_ps(normal, sub, _mm256_castsi256_ps(_mm256_cmpgt_epi32(min_normal, abs)));
    r = _mm256_min_ps(r, maxv);
    r = _mm256_or_ps(r, _mm256_castsi256_ps(sign));
    const __m256 is_nan = _mm256_castsi256_ps(_mm256_cmpgt_epi32(abs, inf));
    const __m256 q = _mm256_blendv_ps(r, v, is_nan);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(q, _mm256_loadu_ps(dec + i)));
    const __m256i xabs = _mm256_and_si256(_mm256_castps_si256(xi), abs_mask);
    const __m256 finite = _mm256_castsi256_ps(_mm256_cmpgt_epi32(inf, xabs));
    const __m256 nonzero = _mm256_cmp_ps(xi, zero, _CMP_NEQ_UQ);
    const __m256 q_zero = _mm256_cmp_ps(q, zero, _CMP_EQ_OQ);
    const __m256 over = _mm256_cmp_ps(_mm256_castsi256_ps(abs), _mm256_set1_ps(sat_above), _CMP_GT_OQ);
    under += __builtin_popcount(_mm256_movemask_ps(_mm256_and_ps(_mm256_and_ps(finite, nonzero), q_zero)));
    sat += __builtin_popcount(_mm256_movemask_ps(_mm256_and_ps(finite, over)));
  }
  c.underflow += under, c.saturated += sat;
  if (i < n)
    quantize_row<M, B, SR>(x + i, n - i, enc + i, dec + i, max, sat_above, seed, index0 + static_cast<uint32_t>(i),
                           out + i, c);
}
#endif

using RowKernel = void (*)(const float*, int64_t, const float*, const float*, float, float, uint32_t, uint32_t,
                           float*, QuantCounts&);

// The row kernel of an element and rounding, AVX2 where the CPU has it.
template <int M, int B>
RowKernel row_kernel_of(bool sr) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return sr ? quantize_row_avx2<M, B, true> : quantize_row_avx2<M, B, false>;
#endif
  return sr ? quantize_row<M, B, true> : quantize_row<M, B, false>;
}

RowKernel row_kernel(Element e, bool sr) {
  switch (e) {
    case Element::E4M3: return row_kernel_of<3, 7>(sr);
    case Element::E5M2: return row_kernel_of<2, 15>(sr);
    default: return row_kernel_of<1, 1>(sr);
  }
}

// One row rounded to bf16 and back, counting underflow and overflow to Inf: the portable loop, and the AVX2 one
// (f32_to_bf16's integer rounding on eight lanes).
void bf16_row(const float* x, int64_t n, float* out, QuantCounts& c) {
  int64_t under = 0, sat = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float xi = x[i], q = formats::bf16_to_f32(formats::f32_to_bf16(xi));
    const bool finite = (formats::f2u(xi) & 0x7FFFFFFFu) < 0x7F800000u;
    under += finite && xi != 0 && q == 0;
    sat += finite && !((formats::f2u(q) & 0x7FFFFFFFu) < 0x7F800000u);
    out[i] = q;
  }
  c.underflow += under, c.saturated += sat;
}

#ifdef MLSB_SIMD_X86
MLSB_TARGET_AVX2 void bf16_row_avx2(const float* x, int64_t n, float* out, QuantCounts& c) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
  const __m256i low = _mm256_set1_epi32(0x7FFF), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x00400000);
  const __m256i keep = _mm256_set1_epi32(static_cast<int>(0xFFFF0000u));
  const __m256 zero = _mm256_setzero_ps();
  int64_t under = 0, sat = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i xb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i abs = _mm256_and_si256(xb, abs_mask);
    const __m256i nan = _mm256_cmpgt_epi32(abs, inf);
    const __m256i rounded =
        _mm256_add_epi32(xb, _mm256_add_epi32(low, _mm256_and_si256(_mm256_srli_epi32(xb, 16), one)));
    const __m256i qb = _mm256_and_si256(_mm256_blendv_epi8(rounded, _mm256_or_si256(xb, quiet), nan), keep);
    const __m256 q = _mm256_castsi256_ps(qb);
    _mm256_storeu_ps(out + i, q);
    const __m256i finite = _mm256_cmpgt_epi32(inf, abs);
    const __m256i q_finite = _mm256_cmpgt_epi32(inf, _mm256_and_si256(qb, abs_mask));
    const __m256 nonzero = _mm256_cmp_ps(_mm256_castsi256_ps(xb), zero, _CMP_NEQ_UQ);
    const __m256 q_zero = _mm256_cmp_ps(q, zero, _CMP_EQ_OQ);
    under += __builtin_popcount(
        _mm256_movemask_ps(_mm256_and_ps(_mm256_and_ps(_mm256_castsi256_ps(finite), nonzero), q_zero)));
    sat += __builtin_popcount(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_andnot_si256(q_finite, finite))));
  }
  c.underflow += under, c.saturated += sat;
  if (i < n) bf16_row(x + i, n - i, out + i, c);
}
#endif

QuantCounts copy_or_bf16(const OperandFormat& f, const Operand& m, float* dst) {
  QuantCounts c;
  c.values = m.rows * m.cols;
  c.bytes = static_cast<double>(c.values) * (f.scaling == Scaling::Bf16 ? 2 : 4);
  auto row = bf16_row;
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) row = bf16_row_avx2;
#endif
  for (int64_t r = 0; r < m.rows; ++r) {
    const float* x = m.data + r * m.ld;
    float* out = dst + r * m.cols;
    if (f.scaling == Scaling::None) {
      if (out != x) std::memmove(out, x, static_cast<size_t>(m.cols) * sizeof(float));
    } else {
      row(x, m.cols, out, c);
    }
  }
  return c;
}

}  // namespace

float amax_of(const Operand& m) {
  float a = 0;
  for (int64_t r = 0; r < m.rows; ++r) {
    const float* x = m.data + r * m.ld;
    for (int64_t i = 0; i < m.cols; ++i) a = std::max(a, finite_abs(x[i]));
  }
  return a;
}

QuantCounts quantize(const OperandFormat& f, const Operand& m, float tensor_scale, uint64_t random_seed,
                     float* dst) {
  if (f.scaling == Scaling::None || f.scaling == Scaling::Bf16) return copy_or_bf16(f, m, dst);
  const formats::ElementSpec spec = formats::element_spec(f.element);
  const bool tensor = f.scaling == Scaling::TensorDelayed || f.scaling == Scaling::TensorCurrent;
  // Tile shape: the band of rows that share scales, and the columns of a tile within it.
  int64_t tr = 1, tc = 1;
  if (tensor)
    tr = std::max<int64_t>(m.rows, 1), tc = std::max<int64_t>(m.cols, 1);
  else if (f.square)
    tr = tc = f.block;
  else
    (m.k_rows ? tr : tc) = f.block;
  float nv_tensor = 1;
  if (f.scaling == Scaling::Nvfp4) {
    const float a = amax_of(m);
    nv_tensor = a > 0 ? std::min(formats::element_spec(Element::E4M3).max * spec.max / a, FLT_MAX) : 1.0f;
  }
  QuantCounts c;
  c.values = m.rows * m.cols;
  c.bytes = static_cast<double>(c.values) * spec.bits / 8 + (f.scaling == Scaling::Nvfp4 ? 4 : 0);
  const RowKernel kernel = row_kernel(f.element, f.stochastic);
  const float sat_above = saturation_bound(spec);
  const uint32_t seed = static_cast<uint32_t>(random_seed ^ (random_seed >> 32));
  std::vector<float> colmax(static_cast<size_t>(m.cols)), enc(colmax.size()), dec(colmax.size());
  for (int64_t r0 = 0; r0 < m.rows; r0 += tr) {
    const int64_t r1 = std::min(m.rows, r0 + tr);
    std::fill(colmax.begin(), colmax.end(), 0.0f);
    for (int64_t r = r0; r < r1; ++r) {
      const float* x = m.data + r * m.ld;
      for (int64_t i = 0; i < m.cols; ++i) colmax[i] = std::max(colmax[i], finite_abs(x[i]));
    }
    for (int64_t c0 = 0; c0 < m.cols; c0 += tc) {
      const int64_t c1 = std::min(m.cols, c0 + tc);
      const float amax = *std::max_element(colmax.begin() + c0, colmax.begin() + c1);
      c.amax = std::max(c.amax, amax);
      const TileScale s = tile_scale(f, amax, tensor_scale, nv_tensor);
      std::fill(enc.begin() + c0, enc.begin() + c1, s.enc);
      std::fill(dec.begin() + c0, dec.begin() + c1, s.dec);
      c.bytes += scale_bytes(f.scaling);
    }
    for (int64_t r = r0; r < r1; ++r)
      kernel(m.data + r * m.ld, m.cols, enc.data(), dec.data(), spec.max, sat_above, seed, static_cast<uint32_t>(r * m.cols),
             dst + r * m.cols, c);
  }
  return c;
}

namespace {

// The whole-row steps of hadamard16 along rows: a, b <- a + b, a - b, and a row times s (a sign, or the 1/4 that
// makes the transform orthonormal); portable, and AVX2 (the same single operations, so bit for bit the same).
void butterfly_rows(float* a, float* b, int64_t n) {
  for (int64_t c = 0; c < n; ++c) {
    const float x = a[c], y = b[c];
    a[c] = x + y, b[c] = x - y;
  }
}
void scale_row(float* a, int64_t n, float s) {
  for (int64_t c = 0; c < n; ++c) a[c] *= s;
}
#ifdef MLSB_SIMD_X86
MLSB_TARGET_AVX2 void butterfly_rows_avx2(float* a, float* b, int64_t n) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m256 x = _mm256_loadu_ps(a + c), y = _mm256_loadu_ps(b + c);
    _mm256_storeu_ps(a + c, _mm256_add_ps(x, y));
    _mm256_storeu_ps(b + c, _mm256_sub_ps(x, y));
  }
  butterfly_rows(a + c, b + c, n - c);
}
MLSB_TARGET_AVX2 void scale_row_avx2(float* a, int64_t n, float s) {
  int64_t c = 0;
  for (; c + 8 <= n; c += 8) _mm256_storeu_ps(a + c, _mm256_mul_ps(_mm256_loadu_ps(a + c), _mm256_set1_ps(s)));
  scale_row(a + c, n - c, s);
}
#endif

}  // namespace

void hadamard16(float* m, int64_t rows, int64_t cols, bool k_rows, uint16_t signs) {
  constexpr int kN = 16;
  if (k_rows) {  // groups of 16 rows, each butterfly a whole-row operation
    auto butterfly = butterfly_rows;
    auto scale = scale_row;
#ifdef MLSB_SIMD_X86
    if (simd_level() >= Simd::avx2) butterfly = butterfly_rows_avx2, scale = scale_row_avx2;
#endif
    for (int64_t g = 0; g + kN <= rows; g += kN) {
      float* p[kN];
      for (int j = 0; j < kN; ++j) {
        p[j] = m + (g + j) * cols;
        if ((signs >> j) & 1u) scale(p[j], cols, -1.0f);
      }
      for (int h = 1; h < kN; h *= 2)
        for (int i = 0; i < kN; i += 2 * h)
          for (int j = i; j < i + h; ++j) butterfly(p[j], p[j + h], cols);
      for (int j = 0; j < kN; ++j) scale(p[j], cols, 0.25f);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g + kN <= cols; g += kN) {
      float* v = m + r * cols + g;
      for (int j = 0; j < kN; ++j)
        if ((signs >> j) & 1u) v[j] = -v[j];
      for (int h = 1; h < kN; h *= 2)
        for (int i = 0; i < kN; i += 2 * h)
          for (int j = i; j < i + h; ++j) {
            const float a = v[j], b = v[j + h];
            v[j] = a + b, v[j + h] = a - b;
          }
      for (int j = 0; j < kN; ++j) v[j] *= 0.25f;
    }
}

}  // namespace mlsb::moe_train::precision
