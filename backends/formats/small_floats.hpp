#pragma once
// Small floating-point formats, for the host and (under nvcc) the device: bf16, IEEE fp16 and the OCP
// 8-bit floats (OCP "8-bit Floating Point Specification (OFP8)", rev. 1.0, 2023: E4M3 "fn" with bias 7,
// no Inf, NaN = S.1111.111, max 448; E5M2 with bias 15, IEEE-like Inf/NaN, max 57344).
// Widening is exact. Narrowing rounds to nearest, ties to even; NaN stays NaN (quietened, keeping the
// sign and the top payload bits); fp16 overflows to ±Inf, fp8 saturates to ±max (Inf included).
// One definition serves the codecs, their CUDA kernels and the communicators' reductions. C++17 (nvcc).
#include <cstdint>
#include <cstring>

#include "backends/cuda/host_device.hpp"

namespace mlsb::formats {

MLSB_HD uint32_t f2u(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
MLSB_HD float u2f(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}
MLSB_HD bool is_nan_bits(uint32_t x) { return (x & 0x7FFFFFFFu) > 0x7F800000u; }
MLSB_HD bool is_finite_bits(uint32_t x) { return (x & 0x7F800000u) != 0x7F800000u; }

// ---- 16-bit floats ----

MLSB_HD float bf16_to_f32(uint16_t h) { return u2f(static_cast<uint32_t>(h) << 16); }

MLSB_HD uint16_t f32_to_bf16(float f) {
  const uint32_t x = f2u(f);
  if (is_nan_bits(x)) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

MLSB_HD float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1F) return u2f(sign | 0x7F800000u | (mant << 13));
  if (exp != 0) return u2f(sign | ((exp + 112u) << 23) | (mant << 13));
  return u2f(sign | f2u(static_cast<float>(mant) * 0x1p-24f));  // zero or subnormal: exact
}

/// Rounds a finite magnitude (fp32 bits without the sign) to a small float with M fraction bits and
/// exponent bias B, round to nearest even; the result may carry into the exponent field (callers
/// clamp overflow). Normal exponents are >= 1 - B, below them subnormals in steps of 2^(1 - B - M).
template <int M, int B>
MLSB_HD uint32_t round_magnitude(uint32_t abs) {
  const int e = static_cast<int>(abs >> 23) - 127;
  const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
  uint32_t shift = 23 - M, base = 0;
  if (e >= 1 - B) {
    base = static_cast<uint32_t>(e + B - 1) << M;
  } else {
    shift += static_cast<uint32_t>(1 - B - e);
    if (shift > 24) return 0;  // below half the smallest subnormal (fp32 subnormals included)
  }
  uint32_t h = base + (m >> shift);
  const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1u))) ++h;
  return h;
}

MLSB_HD uint16_t f32_to_fp16(float f) {
  const uint32_t x = f2u(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));
  if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 2^16: Inf
  return static_cast<uint16_t>(sign | round_magnitude<10, 15>(abs));    // 65520 and up carry to Inf
}

// ---- 8-bit floats ----

MLSB_HD uint8_t f32_to_e4m3(float f) {
  const uint32_t x = f2u(f), abs = x & 0x7FFFFFFFu;
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  if (abs > 0x7F800000u) return sign | 0x7F;
  if (abs >= 0x43E00000u) return sign | 0x7E;  // >= 448 (Inf included)
  return static_cast<uint8_t>(sign | round_magnitude<3, 7>(abs));
}
MLSB_HD uint8_t f32_to_e5m2(float f) {
  const uint32_t x = f2u(f), abs = x & 0x7FFFFFFFu;
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  if (abs > 0x7F800000u) return sign | 0x7E;
  if (abs >= 0x47600000u) return sign | 0x7B;  // >= 57344 (Inf included)
  return static_cast<uint8_t>(sign | round_magnitude<2, 15>(abs));
}

/// Decoded value of an fp8 code: exact; NaN is the quiet NaN with the code's sign, e5m2 0x7C is Inf.
template <int M, int B>
MLSB_HD float fp8_to_f32(uint8_t q) {
  const uint32_t sign = static_cast<uint32_t>(q & 0x80u) << 24;
  const int exp = (q & 0x7F) >> M, mant = q & ((1 << M) - 1), top = (1 << (7 - M)) - 1;
  if (M == 3 && exp == top && mant == 7) return u2f(sign | 0x7FC00000u);
  if (M == 2 && exp == top) return u2f(sign | (mant ? 0x7FC00000u : 0x7F800000u));
  // mant * 2^(1-B-M) or (mant + 2^M) * 2^(exp-B-M): small integers times a power of two, exact in fp32
  const float v = exp == 0 ? static_cast<float>(mant) * u2f(static_cast<uint32_t>(127 + 1 - B - M) << 23)
                           : static_cast<float>(mant + (1 << M)) * u2f(static_cast<uint32_t>(127 + exp - B - M) << 23);
  return u2f(sign | f2u(v));
}
MLSB_HD float e4m3_to_f32(uint8_t q) { return fp8_to_f32<3, 7>(q); }
MLSB_HD float e5m2_to_f32(uint8_t q) { return fp8_to_f32<2, 15>(q); }

}  // namespace mlsb::formats
