// The lossy codecs' element loops (quantize_kernels.hpp): portable loops over quant_math.hpp's functions, and
// AVX2 loops that compute the same functions on eight fp32 lanes with the same IEEE operations (division,
// multiplication, min/max, round to nearest even, the fp16 conversions of F16C) and integer bit manipulation
// (or an fp32 addition), checked against them on every fp32 input.
#include "workloads/compress/quantize_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "backends/formats/small_floats.hpp"
#include "util/simd.hpp"
#include "workloads/compress/quant_math.hpp"

#ifdef MLSB_SIMD_X86
#include <immintrin.h>
#endif

namespace mlsb::compress::quant_kernels {
namespace {

/// The block loop of both versions: the scale of each block from Absmax's result, then Encode's codes. The
/// scales of a group of blocks come first: their serial chains (reduction, division) overlap one another
/// instead of stalling the coding of each block.
template <int KIND, float (*Absmax)(const float*, int64_t), void (*Encode)(const float*, int64_t, float, uint8_t*)>
[[gnu::always_inline]] inline void encode_blocks_with(const float* x, int64_t n, int64_t block, uint8_t* scales,
                                                      uint8_t* codes) {
  constexpr int64_t kGroup = 2048;  // elements: 8 KiB of fp32, read twice from L1
  const int64_t group = std::max<int64_t>(1, kGroup / block) * block;
  for (int64_t first = 0; first < n; first += group) {
    const int64_t end = std::min(n, first + group);
    for (int64_t begin = first; begin < end; begin += block) {
      const float scale = quant::block_scale<KIND>(Absmax(x + begin, std::min(block, end - begin)));
      std::memcpy(scales + 4 * (begin / block), &scale, 4);
    }
    for (int64_t begin = first; begin < end; begin += block) {
      float scale;
      std::memcpy(&scale, scales + 4 * (begin / block), 4);
      Encode(x + begin, std::min(block, end - begin), scale, codes + begin);
    }
  }
}

/// The decoding loop of both versions: Decode's values for each block with its scale.
template <void (*Decode)(const uint8_t*, int64_t, float, float*)>
[[gnu::always_inline]] inline void decode_blocks_with(const uint8_t* scales, const uint8_t* codes, int64_t n,
                                                      int64_t block, float* out) {
  for (int64_t begin = 0; begin < n; begin += block, scales += 4) {
    float scale;
    std::memcpy(&scale, scales, 4);
    Decode(codes + begin, std::min(block, n - begin), scale, out + begin);
  }
}

namespace portable {

void widen(DType t, const uint8_t* in, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = load_float(in, t, i);
}

void widen_fp16_scaled(const uint8_t* in, int64_t n, float scale, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = load_float(in, DType::F16, i) * scale;
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

/// The 256 code values of a block kind (quant::code_value), looked up instead of converted per element.
template <int KIND>
const std::array<float, 256>& code_values() {
  static const std::array<float, 256> t = [] {
    std::array<float, 256> a{};
    for (int i = 0; i < 256; ++i) a[i] = quant::code_value<KIND>(static_cast<uint8_t>(i));
    return a;
  }();
  return t;
}

template <int KIND>
void decode(const uint8_t* codes, int64_t n, float scale, float* out) {
  const std::array<float, 256>& values = code_values<KIND>();
  for (int64_t i = 0; i < n; ++i) out[i] = quant::scaled(values[codes[i]], scale);
}

template <int KIND>
void decode_blocks(const uint8_t* scales, const uint8_t* codes, int64_t n, int64_t block, float* out) {
  decode_blocks_with<decode<KIND>>(scales, codes, n, block, out);
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

/// formats::fp16_to_f32 of eight lanes.
MLSB_TARGET_AVX2 inline __m256 fp16_to_f32(__m128i h) {
  // F16C widens exactly but quietens signalling NaNs: NaN lanes take fp16_to_f32's bits.
  const __m256i h32 = _mm256_cvtepu16_epi32(h);
  const __m256i nan_bits =
      _mm256_or_si256(_mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(h32, set1(0x8000)), 16), set1(0x7F800000)),
                      _mm256_slli_epi32(_mm256_and_si256(h32, set1(0x3FF)), 13));
  const __m256i nan = greater(_mm256_and_si256(h32, set1(0x7FFF)), set1(0x7C00));
  return _mm256_blendv_ps(_mm256_cvtph_ps(h), _mm256_castsi256_ps(nan_bits), _mm256_castsi256_ps(nan));
}

MLSB_TARGET_AVX2 void widen(DType t, const uint8_t* in, int64_t n, float* out) {
  if (t == DType::F32) {
    if (n > 0) std::memcpy(out, in, static_cast<size_t>(n) * 4);
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    _mm256_storeu_ps(out + i, t == DType::BF16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16))
                                               : fp16_to_f32(h));
  }
  portable::widen(t, in + 2 * i, n - i, out + i);
}

MLSB_TARGET_AVX2 void widen_fp16_scaled(const uint8_t* in, int64_t n, float scale, float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_mul_ps(fp16_to_f32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i))), s));
  portable::widen_fp16_scaled(in + 2 * i, n - i, scale, out + i);
}

MLSB_TARGET_AVX2 float finite_absmax(const float* x, int64_t n) {
  const __m256i abs_mask = set1(0x7FFFFFFF), inf = set1(0x7F800000);
  __m256i mx = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i a = _mm256_and_si256(load_bits(x + i), abs_mask);
    mx = _mm256_max_epu32(mx, _mm256_and_si256(a, greater(inf, a)));
  }
  __m128i m = _mm_max_epu32(_mm256_castsi256_si128(mx), _mm256_extracti128_si256(mx, 1));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4E));
  m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xB1));
  const uint32_t top = static_cast<uint32_t>(_mm_cvtsi128_si32(m));
  return i == n ? formats::u2f(top) : std::max(formats::u2f(top), portable::finite_absmax(x + i, n - i));
}

/// formats::round_magnitude<M, B> (e4m3: M 3, B 7; e5m2: M 2, B 15) of eight non-negative lanes, codes in the
/// low bytes, unsaturated: rounding is monotonic, so a lane at or above qmax rounds to qmax's code or above,
/// one below it to at most that code, and Inf and NaN lanes to more than 0x7F.
template <int M, int B>
MLSB_TARGET_AVX2 inline __m256i fp8_magnitude(__m256 v) {
  const __m256i abs = _mm256_castps_si256(v);
  // Normal results: the fp32 bits rounded to M fraction bits (to nearest even, carrying into the exponent),
  // the exponent rebiased before the shift (no borrow: v >= 2^(1-B)).
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(abs, 23 - M), set1(1));
  const __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(abs, odd), set1((1u << (22 - M)) - 1 - ((127u - B) << 23)));
  const __m256i normal = _mm256_srli_epi32(rounded, 23 - M);
  // Subnormal results (v < 2^(1-B)): in v + 2^(24-B-M) the ulp is the subnormal step, so the fp32 add rounds
  // v to a multiple of it (to nearest even) and the sum's fraction bits are the code.
  const __m256 magic = _mm256_castsi256_ps(set1((127 + 24 - B - M) << 23));
  const __m256i sub = _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(v, magic)), _mm256_castps_si256(magic));
  return _mm256_blendv_epi8(sub, normal, greater(abs, set1(((127 + 1 - B) << 23) - 1)));
}

/// quant::encode<KIND>(x, scale) of eight lanes for a scale >= 0, codes in the low bytes; `keep` is all ones,
/// or zero when the scale is 0 (every finite element codes as 0).
template <int KIND>
MLSB_TARGET_AVX2 inline __m256i encode8(__m256 x, __m256 scale, __m256i keep) {
  const __m256i bits = _mm256_castps_si256(x), abs = _mm256_and_si256(bits, set1(0x7FFFFFFF));
  const __m256i nonfinite = greater(abs, set1(0x7F7FFFFF));
  if constexpr (KIND == 3) {
    const __m256 v = _mm256_div_ps(x, scale);
    const __m256 c = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));
    // MXCSR's default rounding (to nearest even), then the int8's two's complement byte.
    const __m256i code = _mm256_and_si256(_mm256_cvtps_epi32(c), set1(0xFF));
    return _mm256_blendv_epi8(_mm256_and_si256(code, keep), set1(0x80), nonfinite);
  } else {
    // |x| / scale is |x / scale|, Inf or NaN where x is not finite: saturated at qmax's code for a finite x,
    // at the NaN code for the others; the sign is x's, the sign of x / scale.
    constexpr int kSat = KIND == 4 ? 0x7E : 0x7B, kNan = KIND == 4 ? 0x7F : 0x7E;
    const __m256 v = _mm256_div_ps(_mm256_castsi256_ps(abs), scale);
    const __m256i h = KIND == 4 ? fp8_magnitude<3, 7>(v) : fp8_magnitude<2, 15>(v);
    const __m256i code =
        _mm256_min_epi32(h, _mm256_add_epi32(set1(kSat), _mm256_and_si256(nonfinite, set1(kNan - kSat))));
    const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(bits, 24), set1(0x80));
    return _mm256_and_si256(_mm256_or_si256(code, sign), _mm256_or_si256(keep, nonfinite));
  }
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

/// quant::decode<KIND> of the eight codes in the low bytes of q.
template <int KIND>
MLSB_TARGET_AVX2 inline __m256 decode8(__m128i q, __m256 scale) {
  __m256 value, nan_value;
  __m256i nan;  // lanes of the NaN code
  if constexpr (KIND == 3) {
    const __m256i c = _mm256_cvtepi8_epi32(q);
    value = _mm256_cvtepi32_ps(c);
    nan = _mm256_cmpeq_epi32(c, set1(0xFFFFFF80));
    nan_value = _mm256_castsi256_ps(set1(0x7FC00000));
  } else {
    // The code as fp16 bits, which F16C widens exactly: e5m2 is fp16's high byte; e4m3 shifted one bit less
    // (its value times 2^-8) with the sign moved from bit 14 to 15 (adding the bit to itself).
    const __m128i q16 = _mm_cvtepu8_epi16(q), mag = _mm_and_si128(q16, _mm_set1_epi16(0x7F));
    __m128i h, nan16;
    if constexpr (KIND == 4) {
      const __m128i t = _mm_slli_epi16(q16, 7);
      h = _mm_add_epi16(t, _mm_and_si128(t, _mm_set1_epi16(0x4000)));
      nan16 = _mm_cmpeq_epi16(mag, _mm_set1_epi16(0x7F));
      value = _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0f));
    } else {
      h = _mm_slli_epi16(q16, 8);
      nan16 = _mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7C));
      value = _mm256_cvtph_ps(h);
    }
    nan = _mm256_cvtepi16_epi32(nan16);
    nan_value = _mm256_or_ps(_mm256_and_ps(value, _mm256_castsi256_ps(set1(0x80000000))),
                             _mm256_castsi256_ps(set1(0x7FC00000)));
  }
  // quant::scaled: a NaN code keeps its value; otherwise the product, NaN scales included.
  return _mm256_blendv_ps(_mm256_mul_ps(value, scale), nan_value, _mm256_castsi256_ps(nan));
}

template <int KIND>
MLSB_TARGET_AVX2 void decode(const uint8_t* codes, int64_t n, float scale, float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i));
    _mm256_storeu_ps(out + i, decode8<KIND>(q, s));
    _mm256_storeu_ps(out + i + 8, decode8<KIND>(_mm_unpackhi_epi64(q, q), s));
  }
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, decode8<KIND>(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + i)), s));
  portable::decode<KIND>(codes + i, n - i, scale, out + i);
}

template <int KIND>
MLSB_TARGET_AVX2 void decode_blocks(const uint8_t* scales, const uint8_t* codes, int64_t n, int64_t block, float* out) {
  decode_blocks_with<decode<KIND>>(scales, codes, n, block, out);
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

}  // namespace

void widen(DType t, const uint8_t* in, int64_t n, float* out) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return avx2::widen(t, in, n, out);
#endif
  portable::widen(t, in, n, out);
}

void widen_fp16_scaled(const uint8_t* in, int64_t n, float scale, float* out) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return avx2::widen_fp16_scaled(in, n, scale, out);
#endif
  portable::widen_fp16_scaled(in, n, scale, out);
}

float finite_absmax(const float* x, int64_t n) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return avx2::finite_absmax(x, n);
#endif
  return portable::finite_absmax(x, n);
}

template <int KIND>
void encode_blocks(const float* x, int64_t n, int64_t block, uint8_t* scales, uint8_t* codes) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return avx2::encode_blocks<KIND>(x, n, block, scales, codes);
#endif
  portable::encode_blocks<KIND>(x, n, block, scales, codes);
}
template void encode_blocks<3>(const float*, int64_t, int64_t, uint8_t*, uint8_t*);
template void encode_blocks<4>(const float*, int64_t, int64_t, uint8_t*, uint8_t*);
template void encode_blocks<5>(const float*, int64_t, int64_t, uint8_t*, uint8_t*);

template <int KIND>
void decode_blocks(const uint8_t* scales, const uint8_t* codes, int64_t n, int64_t block, float* out) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return avx2::decode_blocks<KIND>(scales, codes, n, block, out);
#endif
  portable::decode_blocks<KIND>(scales, codes, n, block, out);
}
template void decode_blocks<3>(const uint8_t*, const uint8_t*, int64_t, int64_t, float*);
template void decode_blocks<4>(const uint8_t*, const uint8_t*, int64_t, int64_t, float*);
template void decode_blocks<5>(const uint8_t*, const uint8_t*, int64_t, int64_t, float*);

void cast_bf16(const float* x, int64_t n, uint8_t* dst) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return avx2::cast_bf16(x, n, dst);
#endif
  portable::cast_bf16(x, n, dst);
}

void cast_fp16(const float* x, int64_t n, float first, float second, uint8_t* dst) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return avx2::cast_fp16(x, n, first, second, dst);
#endif
  portable::cast_fp16(x, n, first, second, dst);
}

void narrow(DType t, const float* x, int64_t n, uint8_t* out) {
  switch (t) {
    case DType::F32:
      if (n > 0) std::memcpy(out, x, static_cast<size_t>(n) * 4);
      return;
    case DType::BF16:
      return cast_bf16(x, n, out);
    // x * 1 * 1 is x; quietening a signalling NaN sets a bit that f32_to_fp16 sets anyway.
    case DType::F16:
      return cast_fp16(x, n, 1.0f, 1.0f, out);
  }
}

}  // namespace mlsb::compress::quant_kernels
