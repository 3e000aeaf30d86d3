#pragma once
// bf16 and IEEE fp16 <-> fp32 conversions for the communicators' reductions (backends must not use
// the compress workload's tensor code). Float to half rounds to nearest, ties to even; NaN stays NaN
// (quietened, sign and top payload bits kept); values past the half range become ±Inf.
#include <bit>
#include <cstdint>

namespace mlsb::comm {

/// bf16 is the top half of an fp32: widening is exact.
inline float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);  // RNE; a carry into the exponent is correct
  return static_cast<uint16_t>(rounded >> 16);
}

/// fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; subnormals below 2^-14.
inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // Inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  const float mag = static_cast<float>(mant) * 0x1p-24f;  // subnormal or zero: exact in fp32
  return sign ? -mag : mag;
}

inline uint16_t f32_to_f16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to Inf
  if (a >= 0x38800000u) {                                             // normal half (>= 2^-14)
    const uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((r - 0x38000000u) >> 13));
  }
  if (a <= 0x33000000u) return sign;  // <= 2^-25 rounds to zero (the tie goes to even 0)
  // Subnormal half: the value times 2^24, rounded to an integer (1 + 0x3ff may round up to 0x400,
  // which is the smallest normal's encoding).
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - (a >> 23);  // 14..24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

}  // namespace mlsb::comm
