#pragma once
// Small floating-point formats, for the host and (under nvcc) the device: bf16, IEEE fp16 and the OCP
// 8-bit floats (OCP "8-bit Floating Point Specification (OFP8)", rev. 1.0, 2023: E4M3 "fn" with bias 7,
// no Inf, NaN = S.1111.111, max 448; E5M2 with bias 15, IEEE-like Inf/NaN, max 57344).
// Widening is exact. Narrowing rounds to nearest, ties to even; NaN stays NaN (quietened, keeping the
// sign and the top payload bits); fp16 overflows to ±Inf, fp8 saturates to ±max (Inf included).
// The OCP Microscaling formats (OCP "Microscaling Formats (MX) Specification", v1.0, 2023): the 4-bit E2M1
// element (bias 1, no Inf or NaN, max 6) and the E8M0 shared scale (2^(code - 127), 0xFF = NaN); with E4M3
// and E5M2 they form one table of element formats (Element, element_spec) that the training recipes'
// quantisers (moe_train/precision) and the fp8 codecs (compress) read.
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

// ---- 4-bit floats, MX scales, and the element table ----

/// E2M1 code (sign in bit 3) of f: round to nearest even, saturating to ±6 (Inf included). E2M1 has no NaN
/// (the MX specification leaves its conversion to the implementation): NaN gives ±6 here; the recipes'
/// quantisers keep NaN out of band (fake_quantize passes it through).
MLSB_HD uint8_t f32_to_e2m1(float f) {
  const uint32_t x = f2u(f), abs = x & 0x7FFFFFFFu;
  const uint8_t sign = static_cast<uint8_t>((x >> 28) & 0x8u);
  if (abs >= 0x40C00000u) return sign | 0x7;  // >= 6, Inf and NaN
  return static_cast<uint8_t>(sign | round_magnitude<1, 1>(abs));
}
/// Decoded E2M1 code (low 4 bits): ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, exact.
MLSB_HD float e2m1_to_f32(uint8_t q) {
  const int exp = (q >> 1) & 3, mant = q & 1;
  const float v = exp == 0 ? 0.5f * static_cast<float>(mant)
                           : static_cast<float>(2 + mant) * u2f(static_cast<uint32_t>(127 + exp - 2) << 23);
  return (q & 0x8) ? -v : v;
}

/// The E8M0 scale 2^(code - 127); code 0xFF is NaN. Exact (2^-127 is an fp32 subnormal).
MLSB_HD float e8m0_to_f32(uint8_t code) {
  if (code == 0xFF) return u2f(0x7FC00000u);
  return code == 0 ? u2f(0x00400000u) : u2f(static_cast<uint32_t>(code) << 23);
}

/// floor(log2(|f|)) of a finite non-zero f, fp32 subnormals included.
MLSB_HD int floor_log2(float f) {
  const uint32_t abs = f2u(f) & 0x7FFFFFFFu;
  if (abs >= 0x00800000u) return static_cast<int>(abs >> 23) - 127;
  int top = 22;
  while (!((abs >> top) & 1u)) --top;
  return top - 149;
}

/// An MX block's shared scale (OCP MX v1.0, section 6.3): X = 2^(floor(log2(amax)) - emax_elem) as an E8M0
/// code, the exponent clamped to [-127, 127]; an all-zero block (amax 0) gets 2^-127. amax must be finite.
/// The block's largest element then lands in [2^emax, 2^(emax+1)), above the element's max for E4M3 (448) and
/// E2M1 (6): the specification's conversion saturates it.
MLSB_HD uint8_t mx_scale_e8m0(float amax, int emax_elem) {
  if (!(amax > 0)) return 0;
  int e = floor_log2(amax) - emax_elem;
  e = e < -127 ? -127 : e > 127 ? 127 : e;
  return static_cast<uint8_t>(e + 127);
}

/// The element formats of the low-precision recipes and codecs.
enum class Element : uint8_t { E4M3, E5M2, E2M1 };

/// One element format: OCP name, storage bits, fraction bits, exponent bias, largest finite value, and
/// emax_elem (the exponent of the largest normal power of two, which MX scales are derived from).
struct ElementSpec {
  const char* name;
  int bits, mantissa, bias;
  float max;
  int emax;
};
MLSB_HD ElementSpec element_spec(Element e) {
  switch (e) {
    case Element::E4M3: return {"e4m3", 8, 3, 7, 448.0f, 8};
    case Element::E5M2: return {"e5m2", 8, 2, 15, 57344.0f, 15};
    default: return {"e2m1", 4, 1, 1, 6.0f, 2};
  }
}

/// f rounded to the element format and back, as its code would decode (the value a quantised GEMM reads):
/// round to nearest even, or stochastically with `random` (32 uniform bits; up with probability equal to the
/// distance from the value below, over the gap) when `stochastic`; saturating to ±max (Inf included); NaN
/// passes through. Branch-free on the value (the quantisers' loops vectorise it): within the element's normal
/// range by rounding the fp32 fraction, below it by the fixed step 2^(1 - bias - mantissa).
template <int M, int B>
MLSB_HD float fake_round(float f, bool stochastic, uint32_t random, float max) {
  const uint32_t x = f2u(f), abs = x & 0x7FFFFFFFu, sign = x & 0x80000000u;
  constexpr uint32_t drop = 23 - M, mask = (1u << drop) - 1u;
  // Normal range: round the fraction to M bits (a carry moves into the exponent, which is right).
  const uint32_t inc = stochastic ? (random & mask) : (mask >> 1) + ((abs >> drop) & 1u);
  const uint32_t normal = (abs + inc) & ~mask;
  // Subnormal range: |f| < 2^(1-B) rounds to a multiple of q = 2^(1-B-M), through an fp32 addition (which
  // rounds to nearest even) of 2^23 q, or by hand on the integer multiple for stochastic rounding.
  const float q = u2f(static_cast<uint32_t>(127 + 1 - B - M) << 23);
  const float a = u2f(abs);
  float sub;
  if (stochastic) {
    const float below = u2f(static_cast<uint32_t>(127 + 1 - B) << 23);  // 2^(1-B): keeps the conversion in range
    const float units = (a < below ? a : below) / q;  // exact: q is a power of two; units <= 2^M
    const float whole = static_cast<float>(static_cast<uint32_t>(units));
    const float frac = units - whole;  // exact
    sub = (whole + (static_cast<float>(random >> 8) * 0x1p-24f < frac ? 1.0f : 0.0f)) * q;
  } else {
    const float big = q * 0x1p23f;
    sub = (a + big) - big;
  }
  const uint32_t min_normal = static_cast<uint32_t>(127 + 1 - B) << 23;
  float r = abs < min_normal ? sub : u2f(normal);
  r = r > max ? max : r;
  return abs > 0x7F800000u ? f : u2f(f2u(r) | sign);
}

/// fake_round for an element format (see above).
MLSB_HD float fake_round(Element e, float f, bool stochastic = false, uint32_t random = 0) {
  switch (e) {
    case Element::E4M3: return fake_round<3, 7>(f, stochastic, random, element_spec(e).max);
    case Element::E5M2: return fake_round<2, 15>(f, stochastic, random, element_spec(e).max);
    default: return fake_round<1, 1>(f, stochastic, random, element_spec(e).max);
  }
}

}  // namespace mlsb::formats
