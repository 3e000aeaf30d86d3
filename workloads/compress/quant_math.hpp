#pragma once
// Per-element arithmetic of the lossy element-wise codecs (stream format: quantize.hpp), written once for the
// host and the device: the CPU codecs (quantize.cpp) and the CUDA kernels (cuda/quantize.cu, through
// cuda/codec_math.hpp) both call it, so the GPU streams equal the CPU streams byte for byte. Everything is
// integer bit manipulation or one IEEE-rounded fp32 operation, which the device computes as the host does
// (nvcc's defaults: -prec-div=true, no flush to zero). C++17 (nvcc). The CPU codecs' AVX2 loops
// (quantize_kernels.cpp) compute the same functions lane by lane; a test compares them with these.
//
// Block quantisers (KIND as QuantKind: 3 int8-block, 4 fp8-e4m3, 5 fp8-e5m2): a block's scale is the
// absmax of its finite elements / qmax (127, 448, 57344); an element's code is round(x / scale) clamped to
// +-127 (int8, round half to even) or x / scale narrowed to OCP fp8 (backends/formats/small_floats.hpp:
// round to nearest even, saturating); a non-finite element codes as NaN with its sign (int8: 0x80; e4m3:
// S.1111.111; e5m2: S.11111.10).
#include <cstdint>

#include "backends/formats/small_floats.hpp"

namespace mlsb::compress::quant {

/// The bits of |x| for a finite x, 0 for Inf and NaN; the maximum over a block is the bits of its absmax
/// (comparing non-negative floats as integers orders them as floats).
MLSB_HD uint32_t finite_abs_bits(float x) {
  const uint32_t b = formats::f2u(x) & 0x7FFFFFFFu;
  return b < 0x7F800000u ? b : 0;
}

/// cast-fp16's scale exponent: k = 14 - floor(log2(absmax)), so absmax * 2^k lies in [2^14, 2^15); 0 when
/// absmax is not > 0 (no finite non-zero element) or not finite.
MLSB_HD int32_t fp16_scale_exponent(float absmax) {
  const uint32_t b = formats::f2u(absmax);
  if (!(absmax > 0) || !formats::is_finite_bits(b)) return 0;
  int e = static_cast<int>(b >> 23) - 127;
  if ((b >> 23) == 0) {  // subnormal: value = mant * 2^-149
    int top = 31;
    while (!((b >> top) & 1u)) --top;
    e = top - 149;
  }
  return 14 - e;
}

/// The largest code magnitude of a block kind: 127 (int8), 448 (e4m3), 57344 (e5m2).
template <int KIND>
MLSB_HD float qmax() {
  static_assert(KIND >= 3 && KIND <= 5, "block kinds: 3 int8, 4 e4m3, 5 e5m2");
  return KIND == 3 ? 127.0f : formats::element_spec(KIND == 4 ? formats::Element::E4M3 : formats::Element::E5M2).max;
}

/// A block's scale from the largest finite |x| of the block: absmax / qmax, one step toward 0 where
/// scale * qmax would overflow (near FLT_MAX), so decoded values stay finite.
template <int KIND>
MLSB_HD float block_scale(float absmax) {
  const float scale = absmax / qmax<KIND>();
  if (!formats::is_finite_bits(formats::f2u(scale * qmax<KIND>()))) return formats::u2f(formats::f2u(scale) - 1);
  return scale;
}

/// One element's code given its block's scale (0: every finite element codes as 0).
template <int KIND>
MLSB_HD uint8_t encode(float x, float scale) {
  const uint32_t b = formats::f2u(x);
  if (!formats::is_finite_bits(b)) {
    if (KIND == 3) return 0x80;
    return static_cast<uint8_t>(((b >> 24) & 0x80u) | (KIND == 4 ? 0x7F : 0x7E));
  }
  if (scale == 0) return 0;
  const float v = x / scale;
  if constexpr (KIND == 3) {
    const float c = v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v;
#ifdef __CUDA_ARCH__
    const float r = rintf(c);
#else
    // Round half to even by adding and subtracting 1.5 * 2^23 (exact for |c| < 2^22): rintf's result
    // without a libm call on baseline x86-64.
    const float r = (c + 0x1.8p23f) - 0x1.8p23f;
#endif
    return static_cast<uint8_t>(static_cast<int8_t>(r));
  } else {
    return KIND == 4 ? formats::f32_to_e4m3(v) : formats::f32_to_e5m2(v);
  }
}

/// A code's value before scaling; NaN for the NaN code (int8: 0x80, the canonical quiet NaN).
template <int KIND>
MLSB_HD float code_value(uint8_t q) {
  if constexpr (KIND == 3) {
    return q == 0x80 ? formats::u2f(0x7FC00000u) : static_cast<float>(static_cast<int8_t>(q));
  } else {
    return KIND == 4 ? formats::fp8_to_f32<3, 7>(q) : formats::fp8_to_f32<2, 15>(q);
  }
}

/// A code's value times its block's scale; a NaN value stays that NaN (as the host's x86 multiply keeps it).
MLSB_HD float scaled(float value, float scale) {
  return formats::is_nan_bits(formats::f2u(value)) ? value : value * scale;
}

/// The decoded element: scaled(code_value(q), scale).
template <int KIND>
MLSB_HD float decode(uint8_t q, float scale) {
  return scaled(code_value<KIND>(q), scale);
}

}  // namespace mlsb::compress::quant
