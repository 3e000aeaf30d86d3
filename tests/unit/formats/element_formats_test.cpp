// The recipes' element formats (backends/formats/small_floats.hpp: E4M3, E5M2, E2M1 and the E8M0 scale) against a
// reference written here from the OCP specifications (OFP8 rev. 1.0; Microscaling Formats v1.0): every
// representable magnitude from the encoding's definition, then the nearest of them (ties to the even code),
// saturating at the format's max, NaN kept (E2M1 has no NaN: the codes saturate it, fake_round keeps it).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/formats/small_floats.hpp"

namespace mlsb {
namespace {

using formats::Element;

struct Format {
  Element element;
  int bits, mantissa, bias;
  uint8_t (*encode)(float);
  float (*decode)(uint8_t);
};

const Format kFormats[] = {
    {Element::E4M3, 8, 3, 7, formats::f32_to_e4m3, formats::e4m3_to_f32},
    {Element::E5M2, 8, 2, 15, formats::f32_to_e5m2, formats::e5m2_to_f32},
    {Element::E2M1, 4, 1, 1, formats::f32_to_e2m1, formats::e2m1_to_f32},
};

// Non-negative codes with their magnitudes, in code order (which is magnitude order), NaN and Inf codes left out.
struct Magnitude {
  int code;
  double value;
};
std::vector<Magnitude> magnitudes(const Format& f) {
  std::vector<Magnitude> out;
  const int exp_bits = f.bits - 1 - f.mantissa, top = (1 << exp_bits) - 1;
  for (int c = 0; c < (1 << (f.bits - 1)); ++c) {
    const int e = c >> f.mantissa, m = c & ((1 << f.mantissa) - 1);
    if (f.element == Element::E4M3 && e == top && m == (1 << f.mantissa) - 1) continue;  // S.1111.111 is NaN
    if (f.element == Element::E5M2 && e == top) continue;                               // Inf and NaN
    const double v = e == 0 ? std::ldexp(m, 1 - f.bias - f.mantissa)
                            : std::ldexp(1.0 + std::ldexp(m, -f.mantissa), e - f.bias);
    out.push_back({c, v});
  }
  return out;
}

// The reference rounding of a non-NaN x: the nearest magnitude (ties to the even code), max beyond the range.
double reference(const std::vector<Magnitude>& mags, float x) {
  const double a = std::fabs(static_cast<double>(x));
  double r = mags.back().value;
  if (a < r) {
    auto hi = std::lower_bound(mags.begin(), mags.end(), a, [](const Magnitude& m, double v) { return m.value < v; });
    auto lo = hi == mags.begin() ? hi : hi - 1;
    const double dl = a - lo->value, dh = hi->value - a;
    r = dl < dh ? lo->value : dh < dl ? hi->value : (lo->code % 2 == 0 ? lo->value : hi->value);
  }
  return std::signbit(x) ? -r : r;
}

// Checks the code and fake_round of x against the reference; false (with a message) at the first difference.
void check(const Format& f, const std::vector<Magnitude>& mags, float x) {
  const float code_value = f.decode(f.encode(x));
  const float fake = formats::fake_round(f.element, x);
  if (std::isnan(x)) {
    ASSERT_TRUE(std::isnan(fake)) << std::hexfloat << x;
    if (f.element == Element::E2M1)
      ASSERT_EQ(std::fabs(code_value), 6.0f);
    else
      ASSERT_TRUE(std::isnan(code_value));
    return;
  }
  const float want = static_cast<float>(reference(mags, x));
  ASSERT_EQ(std::bit_cast<uint32_t>(code_value), std::bit_cast<uint32_t>(want))
      << formats::element_spec(f.element).name << " code of " << std::hexfloat << x;
  ASSERT_EQ(std::bit_cast<uint32_t>(fake), std::bit_cast<uint32_t>(want))
      << formats::element_spec(f.element).name << " fake_round of " << std::hexfloat << x;
}

TEST(ElementFormats, EveryBf16PatternRoundsAsTheSpecificationSays) {
  for (const Format& f : kFormats) {
    const auto mags = magnitudes(f);
    for (uint32_t h = 0; h < 65536; ++h) ASSERT_NO_FATAL_FAILURE(check(f, mags, std::bit_cast<float>(h << 16)));
  }
}

// Every fp32 pattern of sign, exponent and the top 11 fraction bits, with the low 12 bits 0, 1, 0x800 or 0xFFF:
// every rounding point of these formats (fraction bit 19 or above: at most 3 fraction bits) is among the top bits,
// and the low bits only decide whether a tie is exact, so these patterns cover every outcome of every fp32 input.
TEST(ElementFormats, EveryRoundingPointOfFp32RoundsAsTheSpecificationSays) {
  const uint32_t lows[] = {0x000, 0x001, 0x800, 0xFFF};
  for (const Format& f : kFormats) {
    const auto mags = magnitudes(f);
    for (uint32_t top = 0; top < (1u << 20); ++top)
      for (uint32_t low : lows) ASSERT_NO_FATAL_FAILURE(check(f, mags, std::bit_cast<float>(top << 12 | low)));
  }
}

TEST(ElementFormats, TableAndKnownValues) {
  EXPECT_EQ(formats::element_spec(Element::E4M3).max, 448.0f);
  EXPECT_EQ(formats::element_spec(Element::E5M2).max, 57344.0f);
  EXPECT_EQ(formats::element_spec(Element::E2M1).max, 6.0f);
  for (const Format& f : kFormats) EXPECT_EQ(magnitudes(f).back().value, formats::element_spec(f.element).max);
  const float e2m1[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 16; ++c) EXPECT_EQ(formats::e2m1_to_f32(static_cast<uint8_t>(c)), (c & 8 ? -1 : 1) * e2m1[c & 7]);
  EXPECT_EQ(formats::f32_to_e2m1(5.0f), 0x6);   // tie between 4 (even code) and 6
  EXPECT_EQ(formats::f32_to_e2m1(0.25f), 0x0);  // tie between 0 and 0.5: even 0
  EXPECT_EQ(formats::f32_to_e2m1(-7.0f), 0xF);  // saturates
  EXPECT_EQ(formats::fake_round(Element::E4M3, 464.0f), 448.0f);  // would round to 480: saturates
  EXPECT_EQ(formats::fake_round(Element::E4M3, INFINITY), 448.0f);
  EXPECT_EQ(formats::fake_round(Element::E5M2, -INFINITY), -57344.0f);
}

TEST(ElementFormats, E8M0ScalesAreMxSpecificationPowersOfTwo) {
  for (int c = 0; c < 255; ++c) EXPECT_EQ(formats::e8m0_to_f32(static_cast<uint8_t>(c)), std::ldexp(1.0f, c - 127));
  EXPECT_TRUE(std::isnan(formats::e8m0_to_f32(0xFF)));
  // X = 2^(floor(log2(amax)) - emax_elem): E4M3 (emax 8), E2M1 (emax 2).
  EXPECT_EQ(formats::mx_scale_e8m0(1.0f, 8), 127 - 8);
  EXPECT_EQ(formats::mx_scale_e8m0(448.0f, 8), 127);       // floor(log2 448) = 8
  EXPECT_EQ(formats::mx_scale_e8m0(511.9f, 8), 127);
  EXPECT_EQ(formats::mx_scale_e8m0(512.0f, 8), 128);
  EXPECT_EQ(formats::mx_scale_e8m0(6.0f, 2), 127);         // floor(log2 6) = 2
  EXPECT_EQ(formats::mx_scale_e8m0(0.0f, 8), 0);           // an all-zero block
  EXPECT_EQ(formats::mx_scale_e8m0(0x1p-140f, 8), 0);      // clamped at 2^-127 (a subnormal amax: floor_log2 -140)
  EXPECT_EQ(formats::mx_scale_e8m0(0x1p127f, 2), 127 + 125);
  EXPECT_EQ(formats::floor_log2(std::ldexp(3.0f, -149)), -148);  // 3 * 2^-149, an fp32 subnormal
}

// Stochastic rounding rounds up with probability (x - below) / (above - below): unbiased, and the same bits give
// the same result.
TEST(ElementFormats, StochasticRoundingIsUnbiasedAndDeterministic) {
  const float inputs[] = {1.1f, -2.7f, 0.3f /* e2m1: between 0 and its subnormal 0.5 */, 5.2f, 0x1.3p-9f};
  for (const Format& f : kFormats) {
    const auto mags = magnitudes(f);
    for (const float x : inputs) {
      const double a = std::fabs(x);
      auto hi = std::lower_bound(mags.begin(), mags.end(), a, [](const Magnitude& m, double v) { return m.value < v; });
      const double above = hi->value, below = (hi - 1)->value;
      double sum = 0;
      const int draws = 1 << 16;
      for (int i = 0; i < draws; ++i) {
        const uint32_t r = static_cast<uint32_t>(i) * 0x9E3779B9u;  // a low-discrepancy sweep of the 32 bits
        const float q = formats::fake_round(f.element, x, true, r);
        ASSERT_EQ(q, formats::fake_round(f.element, x, true, r));
        ASSERT_TRUE(std::fabs(q) == above || std::fabs(q) == below) << std::hexfloat << x << " -> " << q;
        sum += q;
      }
      EXPECT_NEAR(sum / draws, x, 2e-3 * (above - below)) << formats::element_spec(f.element).name << " " << x;
    }
  }
}

}  // namespace
}  // namespace mlsb
