// The lossy codecs' element loops (quantize_kernels.hpp): portable loops over quant_math.hpp's functions, and
// AVX2 loops that compute the same functions on eight fp32 lanes with the same IEEE operations (division,
// min/max, round to nearest even, the fp16 conversion of F16C) and the same integer bit manipulation.
#include "workloads/compress/quantize_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "backends/formats/small_floats.hpp"
#include "util/simd.hpp"
#include "workloads/compress/quant_math.hpp"

#ifdef MLSB_SIMD_X86
#include <immintrin.h>
#endif

namespace mlsb::compress::quant_kernels {
namespace {

/// The block loop of both versions: the scale of each block from Absmax's result, then Encode's codes.
template <int KIND, float (*Absmax)(const float*, int64_t), void (*Encode)(const float*, int64_t, float, uint8_t*)>
[[gnu::always_inline]] inline void encode_blocks_with(const float* x, int64_t n, int64_t block, uint8_t* scales,
                                                      uint8_t* codes) {
  for (int64_t begin = 0; begin < n; begin += block, scales += 4) {
    const int64_t len = std::min(block, n - begin);
    const float scale = quant::block_scale<KIND>(Absmax(x + begin, len));
    std::memcpy(scales, &scale, 4);
    Encode(x + begin, len, scale, codes + begin);
  }
}

namespace portable {

void widen(DType t, const uint8_t* in, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = load_float(in, t, i);
}

float finite_absmax(const float* x, int64_t n) {
  uint32_t mx = 0;
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, quant::finite_abs_bits(x[i]));
  return formats::u2f(mx);
}

template <int KIND>
void encode(const float* x, int64_t n, float scale, uint8_t* codes) {
  for (int64_t i = 0; i < n; ++i) codes[i] = quant::encode<KIND>(x[i], scale);
}

template <int KIND>
void encode_blocks(const float* x, int64_t n, int64_t block, uint8_t* scales, uint8_t* codes) {
  encode_blocks_with<KIND, finite_absmax, encode<KIND>>(x, n, block, scales, codes);
}

void cast_bf16(const float* x, int64_t n, uint8_t* dst) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = formats::f32_to_bf16(x[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

void cast_fp16(const float* x, int64_t n, float first, float second, uint8_t* dst) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t h = formats::f32_to_fp16(x[i] * first * second);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

}  // namespace portable

#ifdef MLSB_SIMD_X86
namespace avx2 {

MLSB_TARGET_AVX2 inline __m256i set1(uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
MLSB_TARGET_AVX2 inline __m256i load_bits(const float* p) { return _mm256_castps_si256(_mm256_loadu_ps(p)); }
/// Lanes where a > b, for values below 2^31 (a signed compare).
MLSB_TARGET_AVX2 inline __m256i greater(__m256i a, __m256i b) { return _mm256_cmpgt_epi32(a, b); }

/// Eight 16-bit values in the low halves of `lo` then `hi`'s lanes, packed in element order.
MLSB_TARGET_AVX2 inline __m256i pack_u16(__m256i lo, __m256i hi) {
  return _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
}

MLSB_TARGET_AVX2 void widen(DType t, const uint8_t* in, int64_t n, float* out) {
  if (t == DType::F32) {
    if (n > 0) std::memcpy(out, in, static_cast<size_t>(n) * 4);
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    const __m256i h32 = _mm256_cvtepu16_epi32(h);
    __m256 f;
    if (t == DType::BF16) {
      f = _mm256_castsi256_ps(_mm256_slli_epi32(h32, 16));
    } else {
      // F16C widens exactly but quietens signalling NaNs: NaN lanes take fp16_to_f32's bits.
      const __m256i nan_bits =
          _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(h32, set1(0x8000)), 16), set1(0x7F800000)),
                          _mm256_slli_epi32(_mm256_and_si256(h32, set1(0x3FF)), 13));
      const __m256i nan = greater(_mm256_and_si256(h32, set1(0x7FFF)), set1(0x7C00));
      f = _mm256_blendv_ps(_mm256_cvtph_ps(h), _mm256_castsi256_ps(nan_bits), _mm256_castsi256_ps(nan));
    }
    _mm256_storeu_ps(out + i, f);
  }
  portable::widen(t, in + 2 * i, n - i, out + i);
}

MLSB_TARGET_AVX2 float finite_absmax(const float* x, int64_t n) {
  const __m256i abs_mask = set1(0x7FFFFFFF), inf = set1(0x7F800000);
  __m256i mx = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_and_si256(load_bits(x + i), abs_mask);
    mx = _mm256_max_epu32(mx, _mm256_and_si256(a, greater(inf, a)));
  }
  uint32_t lanes[8];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), mx);
  const uint32_t m = *std::max_element(lanes, lanes + 8);
  return formats::u2f(std::max(m, formats::f2u(portable::finite_absmax(x + i, n - i))));
}

/// formats::f32_to_e4m3 (M 3, B 7) or f32_to_e5m2 (M 2, B 15) of eight lanes, codes in the low bytes: the
/// steps of formats::round_magnitude, then saturation at kSatAbs (the fp32 bits of qmax) to kSatCode and
/// NaN to kNanCode, with the sign.
template <int M, int B, uint32_t kSatAbs, uint32_t kSatCode, uint32_t kNanCode>
MLSB_TARGET_AVX2 inline __m256i to_fp8(__m256 v) {
  const __m256i x = _mm256_castps_si256(v), one = set1(1);
  const __m256i abs = _mm256_and_si256(x, set1(0x7FFFFFFF));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(x, 24), set1(0x80));
  const __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(abs, 23), set1(127));
  const __m256i m = _mm256_or_si256(_mm256_and_si256(abs, set1(0x7FFFFF)), set1(0x800000));
  const __m256i normal = greater(e, _mm256_set1_epi32(-B));  // e >= 1 - B
  const __m256i base = _mm256_and_si256(normal, _mm256_slli_epi32(_mm256_add_epi32(e, set1(B - 1)), M));
  const __m256i shift =
      _mm256_blendv_epi8(_mm256_sub_epi32(_mm256_set1_epi32(23 - M + 1 - B), e), set1(23 - M), normal);
  __m256i h = _mm256_add_epi32(base, _mm256_srlv_epi32(m, shift));
  const __m256i rem = _mm256_and_si256(m, _mm256_sub_epi32(_mm256_sllv_epi32(one, shift), one));
  const __m256i half = _mm256_sllv_epi32(one, _mm256_sub_epi32(shift, one));
  const __m256i odd = _mm256_cmpeq_epi32(_mm256_and_si256(h, one), one);
  const __m256i up = _mm256_or_si256(greater(rem, half), _mm256_and_si256(_mm256_cmpeq_epi32(rem, half), odd));
  h = _mm256_andnot_si256(greater(shift, set1(24)), _mm256_sub_epi32(h, up));  // up is -1 where rounding up
  h = _mm256_blendv_epi8(h, set1(kSatCode), greater(abs, set1(kSatAbs - 1)));
  h = _mm256_blendv_epi8(h, set1(kNanCode), greater(abs, set1(0x7F800000)));
  return _mm256_or_si256(h, sign);
}

/// quant::encode<KIND>(x, scale) of eight lanes, codes in the low bytes; `keep` is all ones, or zero when
/// the scale is 0 (every finite element codes as 0).
template <int KIND>
MLSB_TARGET_AVX2 inline __m256i encode8(__m256 x, __m256 scale, __m256i keep) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i finite = greater(set1(0x7F800000), _mm256_and_si256(bits, set1(0x7FFFFFFF)));
  const __m256 v = _mm256_div_ps(x, scale);
  __m256i code, special;
  if constexpr (KIND == 3) {
    const __m256 c = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
    code = _mm256_cvtps_epi32(_mm256_round_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    code = _mm256_and_si256(code, set1(0xFF));  // the int8's two's complement byte
    special = set1(0x80);
  } else {
    code = KIND == 4 ? to_fp8<3, 7, 0x43E00000u, 0x7E, 0x7F>(v) : to_fp8<2, 15, 0x47600000u, 0x7B, 0x7E>(v);
    special = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(bits, 24), set1(0x80)), set1(KIND == 4 ? 0x7F : 0x7E));
  }
  return _mm256_blendv_epi8(special, _mm256_and_si256(code, keep), finite);
}

template <int KIND>
MLSB_TARGET_AVX2 void encode(const float* x, int64_t n, float scale, uint8_t* codes) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m256i keep = scale == 0 ? _mm256_setzero_si256() : set1(0xFFFFFFFF);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = encode8<KIND>(_mm256_loadu_ps(x + i), s, keep);
    const __m256i b = encode8<KIND>(_mm256_loadu_ps(x + i + 8), s, keep);
    const __m256i c = encode8<KIND>(_mm256_loadu_ps(x + i + 16), s, keep);
    const __m256i d = encode8<KIND>(_mm256_loadu_ps(x + i + 24), s, keep);
    // Packing works within 128-bit halves: dword k of `bytes` holds elements 4*order[k] .. +3.
    const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (; i + 8 <= n; i += 8) {
    const __m256i a = encode8<KIND>(_mm256_loadu_ps(x + i), s, keep);
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(codes + i), _mm_packus_epi16(w, w));
  }
  portable::encode<KIND>(x + i, n - i, scale, codes + i);
}

template <int KIND>
MLSB_TARGET_AVX2 void encode_blocks(const float* x, int64_t n, int64_t block, uint8_t* scales, uint8_t* codes) {
  encode_blocks_with<KIND, finite_absmax, encode<KIND>>(x, n, block, scales, codes);
}

/// formats::f32_to_bf16 of eight lanes, bits in the low halves.
MLSB_TARGET_AVX2 inline __m256i bf16_bits(__m256i x) {
  const __m256i nan = greater(_mm256_and_si256(x, set1(0x7FFFFFFF)), set1(0x7F800000));
  const __m256i high = _mm256_srli_epi32(x, 16);
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(set1(0x7FFF), _mm256_and_si256(high, set1(1)))), 16);
  return _mm256_blendv_epi8(rounded, _mm256_or_si256(high, set1(0x40)), nan);
}

MLSB_TARGET_AVX2 void cast_bf16(const float* x, int64_t n, uint8_t* dst) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = pack_u16(bf16_bits(load_bits(x + i)), bf16_bits(load_bits(x + i + 8)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), h);
  }
  portable::cast_bf16(x + i, n - i, dst + 2 * i);
}

MLSB_TARGET_AVX2 void cast_fp16(const float* x, int64_t n, float first, float second, uint8_t* dst) {
  const __m256 f1 = _mm256_set1_ps(first), f2 = _mm256_set1_ps(second);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 y = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), f1), f2);
    // F16C rounds to nearest even, overflows to Inf and keeps a NaN's sign and top payload bits, quietened,
    // as formats::f32_to_fp16 does.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT));
  }
  portable::cast_fp16(x + i, n - i, first, second, dst + 2 * i);
}

}  // namespace avx2
#endif

bool use_avx2() { return simd_level() >= Simd::avx2; }

}  // namespace

void widen(DType t, const uint8_t* in, int64_t n, float* out) {
#ifdef MLSB_SIMD_X86
  if (use_avx2()) return avx2::widen(t, in, n, out);
#endif
  portable::widen(t, in, n, out);
}

float finite_absmax(const float* x, int64_t n) {
#ifdef MLSB_SIMD_X86
  if (use_avx2()) return avx2::finite_absmax(x, n);
#endif
  return portable::finite_absmax(x, n);
}

template <int KIND>
void encode_blocks(const float* x, int64_t n, int64_t block, uint8_t* scales, uint8_t* codes) {
#ifdef MLSB_SIMD_X86
  if (use_avx2()) return avx2::encode_blocks<KIND>(x, n, block, scales, codes);
#endif
  portable::encode_blocks<KIND>(x, n, block, scales, codes);
}
template void encode_blocks<3>(const float*, int64_t, int64_t, uint8_t*, uint8_t*);
template void encode_blocks<4>(const float*, int64_t, int64_t, uint8_t*, uint8_t*);
template void encode_blocks<5>(const float*, int64_t, int64_t, uint8_t*, uint8_t*);

void cast_bf16(const float* x, int64_t n, uint8_t* dst) {
#ifdef MLSB_SIMD_X86
  if (use_avx2()) return avx2::cast_bf16(x, n, dst);
#endif
  portable::cast_bf16(x, n, dst);
}

void cast_fp16(const float* x, int64_t n, float first, float second, uint8_t* dst) {
#ifdef MLSB_SIMD_X86
  if (use_avx2()) return avx2::cast_fp16(x, n, first, second, dst);
#endif
  portable::cast_fp16(x, n, first, second, dst);
}

}  // namespace mlsb::compress::quant_kernels
