#include "workloads/compress/tensor.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mlsb::compress {
namespace {

float float_of_bits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

TEST(CompressTensor, DtypeNamesAndSizes) {
  EXPECT_EQ(dtype_size(DType::F32), 4u);
  EXPECT_EQ(dtype_size(DType::BF16), 2u);
  EXPECT_EQ(to_string(DType::F16), "fp16");
  EXPECT_EQ(parse_dtype("float32"), DType::F32);
  EXPECT_EQ(parse_dtype("f16"), DType::F16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("BF16"), DType::BF16);
  EXPECT_THROW(parse_dtype("int8"), std::invalid_argument);
}

TEST(CompressTensor, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(float_of_bits(0x3F808000)), 0x3F80);  // tie, even below
  EXPECT_EQ(float_to_bf16(float_of_bits(0x3F818000)), 0x3F82);  // tie, even above
  EXPECT_EQ(float_to_bf16(float_of_bits(0x3F808001)), 0x3F81);  // just above the tie
  EXPECT_EQ(float_to_bf16(float_of_bits(0x7F7FFFFF)), 0x7F80);  // FLT_MAX rounds up to Inf
  EXPECT_EQ(float_to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(float_to_bf16(float_of_bits(0x00010000)), 0x0001);  // subnormal kept
  EXPECT_EQ(float_to_bf16(float_of_bits(0x00008000)), 0x0000);  // tie to even zero
  EXPECT_EQ(float_to_bf16(float_of_bits(0x00018000)), 0x0002);
  EXPECT_EQ(float_to_bf16(float_of_bits(0x80000001)), 0x8000);
}

TEST(CompressTensor, Bf16NaNStaysNaN) {
  EXPECT_EQ(float_to_bf16(float_of_bits(0x7F800001)), 0x7FC0);  // payload only in the dropped half
  EXPECT_EQ(float_to_bf16(float_of_bits(0xFFC00000)), 0xFFC0);
  EXPECT_EQ(float_to_bf16(float_of_bits(0x7FA12345)), 0x7FE1);
  EXPECT_EQ(bits_of(bf16_to_float(0xFFC5)), 0xFFC50000u);
}

TEST(CompressTensor, Bf16AllCodesRoundTrip) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = bf16_to_float(static_cast<uint16_t>(h));
    const bool nan = (h & 0x7F80) == 0x7F80 && (h & 0x7F);
    ASSERT_EQ(float_to_bf16(f), nan ? (h | 0x40) : h) << std::hex << h;
  }
}

TEST(CompressTensor, Fp16EdgeValues) {
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(65519.99f), 0x7BFF);
  EXPECT_EQ(float_to_fp16(65520.0f), 0x7C00);  // the tie rounds to even: Inf
  EXPECT_EQ(float_to_fp16(1e6f), 0x7C00);
  EXPECT_EQ(float_to_fp16(-1e6f), 0xFC00);
  EXPECT_EQ(float_to_fp16(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(float_to_fp16(float_of_bits(0x7FC00000)), 0x7E00);
  EXPECT_EQ(float_to_fp16(float_of_bits(0xFF800001)), 0xFE00);  // signalling NaN: quiet bit set, stays NaN
  EXPECT_EQ(float_to_fp16(float_of_bits(0x7FFFE000)), 0x7FFF);
  EXPECT_EQ(float_to_fp16(0x1p-24f), 0x0001);
  EXPECT_EQ(float_to_fp16(0x1p-25f), 0x0000);        // tie to even zero
  EXPECT_EQ(float_to_fp16(0x1.8p-25f), 0x0001);
  EXPECT_EQ(float_to_fp16(0x3p-25f), 0x0002);        // 1.5 ulp: tie to even 2
  EXPECT_EQ(float_to_fp16(1023 * 0x1p-24f), 0x03FF);
  EXPECT_EQ(float_to_fp16(1023.5f * 0x1p-24f), 0x0400);  // tie carries into the smallest normal
  EXPECT_EQ(float_to_fp16(0x1p-14f), 0x0400);
  EXPECT_EQ(float_to_fp16(1.0f + 0x1p-11f), 0x3C00);
  EXPECT_EQ(float_to_fp16(1.0f + 0x3p-11f), 0x3C02);
  EXPECT_EQ(float_to_fp16(float_of_bits(0x00000001)), 0x0000);
  EXPECT_EQ(float_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp16_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(bits_of(fp16_to_float(0x8000)), 0x80000000u);
  EXPECT_EQ(fp16_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7C01)));
}

TEST(CompressTensor, Fp16AllCodesRoundTrip) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = fp16_to_float(static_cast<uint16_t>(h));
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
    ASSERT_EQ(float_to_fp16(f), nan ? (h | 0x200) : h) << std::hex << h;
  }
}

TEST(CompressTensor, Fp16MatchesCompilerConversion) {
  // GCC's _Float16 conversion is correctly rounded: compare on a sweep of fp32 bit patterns.
  for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 0x3FF1) {
    const float f = float_of_bits(static_cast<uint32_t>(b));
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    ASSERT_EQ(float_to_fp16(f), std::bit_cast<uint16_t>(h)) << std::hex << b;
  }
}

TEST(CompressTensor, ToFloatAndFromFloat) {
  const float vals[] = {1.0f, -2.5f, 0x1p-24f, 65504.0f};
  Tensor t;
  t.dtype = DType::F16;
  t.data.resize(8);
  from_float(vals, t.mutable_view());
  std::vector<float> back(4);
  to_float(t.view(), back);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back[i], vals[i]);
  std::vector<float> wrong(3);
  EXPECT_THROW(to_float(t.view(), wrong), std::invalid_argument);
  EXPECT_THROW(from_float(wrong, t.mutable_view()), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb::compress
