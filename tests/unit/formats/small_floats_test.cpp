// bf16/fp16 conversions of backends/formats (the codecs, their kernels and the 16-bit reductions use them).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "backends/formats/small_floats.hpp"

namespace mlsb {
namespace {

bool is_nan16(uint16_t h, bool bf16) {
  return bf16 ? (h & 0x7f80) == 0x7f80 && (h & 0x7f) : (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

TEST(FormatsHalf, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const auto h = static_cast<uint16_t>(i);
    if (is_nan16(h, false)) {
      EXPECT_TRUE(std::isnan(formats::fp16_to_f32(h)));
      EXPECT_TRUE(is_nan16(formats::f32_to_fp16(formats::fp16_to_f32(h)), false));
    } else {
      ASSERT_EQ(formats::f32_to_fp16(formats::fp16_to_f32(h)), h) << std::hex << i;
    }
    if (is_nan16(h, true)) {
      EXPECT_TRUE(is_nan16(formats::f32_to_bf16(formats::bf16_to_f32(h)), true));
    } else {
      ASSERT_EQ(formats::f32_to_bf16(formats::bf16_to_f32(h)), h) << std::hex << i;
    }
  }
}

TEST(FormatsHalf, Fp16KnownValues) {
  EXPECT_EQ(formats::fp16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(formats::fp16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(formats::fp16_to_f32(0x0001), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(formats::fp16_to_f32(0x8000), -0.0f);
  EXPECT_TRUE(std::signbit(formats::fp16_to_f32(0x8000)));
  EXPECT_EQ(formats::f32_to_fp16(65519.0f), 0x7bff);  // below the midpoint to Inf
  EXPECT_EQ(formats::f32_to_fp16(65520.0f), 0x7c00);  // the tie rounds to even: Inf
  EXPECT_EQ(formats::f32_to_fp16(-1e9f), 0xfc00);
  EXPECT_EQ(formats::f32_to_fp16(0x1p-25f), 0x0000);                    // tie between 0 and the smallest: even 0
  EXPECT_EQ(formats::f32_to_fp16(0x1.000002p-25f), 0x0001);             // just above the tie
  EXPECT_EQ(formats::f32_to_fp16(0x1.8p-24f), 0x0002);                  // 1.5 subnormal units: tie to even 2
  EXPECT_EQ(formats::f32_to_fp16(1.0f + 0x1p-11f), 0x3c00);             // tie at 1: even
  EXPECT_EQ(formats::f32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);         // tie at 1 + 2^-10: up to even
  EXPECT_EQ(formats::f32_to_fp16(0x1.ffcp-15f), 0x0400);                // rounds up into the smallest normal
}

// The compiler's own _Float16 conversion (round to nearest even) is the reference.
TEST(FormatsHalf, Fp16MatchesCompilerOnRandomFloats) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(rng);
    if (i % 2) u = (u & 0x807fffffu) | ((100u + u % 45u) << 23);  // half of them near the half range
    const float f = std::bit_cast<float>(u);
    if (std::isnan(f)) continue;
    const auto ref = std::bit_cast<uint16_t>(static_cast<_Float16>(f));
    ASSERT_EQ(formats::f32_to_fp16(f), ref) << std::hexfloat << f;
  }
}

TEST(FormatsHalf, Bf16RoundsToNearestEven) {
  EXPECT_EQ(formats::f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(formats::f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);        // tie: even
  EXPECT_EQ(formats::f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);    // tie: up to even
  EXPECT_EQ(formats::f32_to_bf16(1.0f + 0x1.2p-8f), 0x3f81);      // above the tie
  EXPECT_EQ(formats::f32_to_bf16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80);  // FLT_MAX rounds to Inf
  EXPECT_EQ(formats::f32_to_bf16(-0.0f), 0x8000);
  const uint16_t nan = formats::f32_to_bf16(std::bit_cast<float>(0x7f800001u));  // payload only in the low bits
  EXPECT_TRUE(is_nan16(nan, true));
}

}  // namespace
}  // namespace mlsb
