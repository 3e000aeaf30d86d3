// OCP 8-bit floating point (OCP "8-bit Floating Point Specification (OFP8)", rev. 1.0, 2023):
// E4M3 ("fn": bias 7, no Inf, NaN = S.1111.111, max 448) and E5M2 (bias 15, IEEE-like Inf/NaN, max 57344).
// Conversions from fp32 round to nearest even and saturate to ±max (Inf included); NaN stays NaN.
#include <bit>
#include <cmath>
#include <limits>

#include "workloads/compress/quantize.hpp"

namespace mlsb::compress {
namespace {

/// Rounds |f| (finite, below the format's largest value) to an fp8 code without the sign. M fraction
/// bits, exponent bias B: normals have an unbiased exponent >= 1 - B, below that subnormals in steps of
/// 2^(1 - B - M).
template <int M, int B>
uint8_t round_magnitude(uint32_t abs) {
  const int e = static_cast<int>(abs >> 23) - 127;
  const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;  // with the implicit bit
  uint32_t shift = 23 - M;
  uint32_t base = 0;
  if (e >= 1 - B) {
    base = static_cast<uint32_t>(e + B - 1) << M;  // the implicit bit in (m >> shift) adds the last 1
  } else {
    shift += static_cast<uint32_t>(1 - B - e);
    if (shift > 24) return 0;  // below half the smallest subnormal
  }
  uint32_t h = base + (m >> shift);
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1u))) ++h;
  return static_cast<uint8_t>(h);
}

template <int M, int B>
float decode(uint8_t q, bool nan, bool inf) {
  const float sign = (q & 0x80) ? -1.0f : 1.0f;
  if (nan) return std::copysign(std::numeric_limits<float>::quiet_NaN(), sign);
  if (inf) return sign * std::numeric_limits<float>::infinity();
  const int exp = (q & 0x7F) >> M;
  const int mant = q & ((1 << M) - 1);
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), 1 - B - M);
  return sign * std::ldexp(static_cast<float>(mant + (1 << M)), exp - B - M);
}

}  // namespace

uint8_t float_to_e4m3(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7F;
  if (abs >= std::bit_cast<uint32_t>(448.0f)) return sign | 0x7E;  // saturate (Inf included)
  return sign | round_magnitude<3, 7>(abs);
}

float e4m3_to_float(uint8_t q) { return decode<3, 7>(q, (q & 0x7F) == 0x7F, false); }

uint8_t float_to_e5m2(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | 0x7E;
  if (abs >= std::bit_cast<uint32_t>(57344.0f)) return sign | 0x7B;  // saturate (Inf included)
  return sign | round_magnitude<2, 15>(abs);
}

float e5m2_to_float(uint8_t q) { return decode<2, 15>(q, (q & 0x7F) > 0x7C, (q & 0x7F) == 0x7C); }

}  // namespace mlsb::compress
