// moe_train's low-precision recipes (workloads/moe_train/precision): the quantisers' scaling rules at their edges,
// delayed scaling's amax history, the Hadamard transform, the accumulator model, the straight-through GEMMs of
// each recipe, the AVX2 loops against the portable ones, and fp32 as today's model bit for bit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "support/random_values.hpp"
#include "backends/cpu/gemm.hpp"
#include "util/simd.hpp"
#include "workloads/moe_train/moe_lm.hpp"
#include "workloads/moe_train/precision/accumulate.hpp"
#include "workloads/moe_train/precision/precision.hpp"
#include "workloads/moe_train/precision/quantize.hpp"

namespace mlsb::moe_train::precision {
namespace {

using formats::Element;

OperandFormat blockwise(bool square = false) { return {Scaling::Block, Element::E4M3, 128, square}; }

std::vector<float> quantized(const OperandFormat& f, const std::vector<float>& x, int64_t rows, int64_t cols,
                             bool k_rows, QuantCounts* counts = nullptr, uint64_t seed = 1) {
  std::vector<float> out(x.size());
  const QuantCounts c = quantize(f, {x.data(), rows, cols, cols, k_rows}, 1.0f, seed, out.data());
  if (counts) *counts = c;
  return out;
}

using mlsb::test::normal_floats;

TEST(PrecisionQuantize, AmaxAtTheTileMaximumDecodesExactly) {
  // A 1x128 tile whose amax is 448 * 2^-3: the scale is 8, the largest element maps onto 448 exactly.
  std::vector<float> x(256, 0.5f);
  x[5] = 56.0f, x[200] = -3.5f;
  QuantCounts c;
  const auto q = quantized(blockwise(), x, 1, 256, false, &c);
  EXPECT_EQ(q[5], 56.0f);
  EXPECT_EQ(q[200], -3.5f);  // the second tile's own amax
  EXPECT_EQ(c.saturated, 0);
  EXPECT_EQ(c.underflow, 0);
  EXPECT_EQ(c.bytes, 256 + 2 * 4);  // one byte per element, an fp32 scale per tile
}

TEST(PrecisionQuantize, AllZeroTilesStayZeroAndOutliersCrushOnlyTheirTile) {
  std::vector<float> x(384, 1.0f);
  std::fill(x.begin() + 128, x.begin() + 256, 0.0f);
  x[300] = 1e6f;  // third tile: the others in it fall below e4m3's smallest subnormal once scaled
  QuantCounts c;
  const auto q = quantized(blockwise(), x, 1, 384, false, &c);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(q[i], 1.0f);
  for (int i = 128; i < 256; ++i) ASSERT_EQ(q[i], 0.0f);
  EXPECT_EQ(q[300], 1e6f);
  EXPECT_EQ(q[301], 0.0f);
  EXPECT_EQ(c.underflow, 127);
}

// A tile whose scale 448 / amax overflows fp32 (amax below about 1.3e-36) gets FLT_MAX, as Transformer Engine clamps
// it: its elements stay finite and mostly underflow; just above that, subnormal outputs keep e4m3's precision.
TEST(PrecisionQuantize, TinyTilesKeepAFiniteScale) {
  std::vector<float> x(256);
  for (int i = 0; i < 128; ++i) x[i] = std::ldexp(1.0f + i / 128.0f, -140);        // fp32 subnormals
  for (int i = 128; i < 256; ++i) x[i] = std::ldexp(1.0f + (i - 128) / 128.0f, -110);  // normal, tiny
  QuantCounts c;
  const auto q = quantized(blockwise(), x, 1, 256, false, &c);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(q[i], 0.0f) << i;
  EXPECT_EQ(c.underflow, 128);
  for (int i = 128; i < 256; ++i) EXPECT_NEAR(q[i], x[i], x[i] / 16) << i;  // e4m3's half step: 2^-4
}

TEST(PrecisionQuantize, PartialTilesAndTileOrientation) {
  // 130 columns in 1x128 tiles: the last tile has 2 elements and its own scale.
  std::vector<float> x(2 * 130, 1.0f);
  x[129] = 3.0f, x[128] = 0.1f;
  const auto q = quantized(blockwise(), x, 2, 130, false);
  EXPECT_EQ(q[129], 3.0f);
  EXPECT_NEAR(q[128], 0.1f, 0.1f / 16);
  // The reduction dimension down the rows: tiles are columns of 128 rows, so a large element in one column does
  // not touch its row neighbours.
  std::vector<float> y(128 * 2, 1.0f);
  y[0] = 1e6f;  // column 0
  const auto qy = quantized(blockwise(), y, 128, 2, true);
  EXPECT_EQ(qy[1], 1.0f);     // column 1, row 0
  EXPECT_EQ(qy[2], 0.0f);     // column 0, row 1: crushed by the outlier of its tile
}

TEST(PrecisionQuantize, SquareBlocksServeBothOrientations) {
  const auto w = normal_floats(256 * 256, 3);
  const auto a = quantized(blockwise(true), w, 256, 256, false);
  const auto b = quantized(blockwise(true), w, 256, 256, true);
  EXPECT_EQ(a, b);
}

// Per-tensor current scaling maps the amax onto the max: the fp32 rounding of 448 / amax may put it a hair above
// 448, which rounds back to 448 and is no saturation; what rounds beyond the max is.
TEST(PrecisionQuantize, SaturationIsWhatRoundsBeyondTheMax) {
  const OperandFormat current{Scaling::TensorCurrent, Element::E4M3};
  for (uint64_t seed = 0; seed < 200; ++seed) {
    QuantCounts c;
    quantized(current, normal_floats(256, seed), 1, 256, false, &c);
    ASSERT_EQ(c.saturated, 0) << seed;
  }
  // At a fixed scale (delayed scaling's): e4m3 from above 464, e5m2 and e2m1 from their midpoints (odd max codes).
  const std::vector<float> x = {464.0f, 464.1f, 61439.0f, 61440.0f, 6.9f, 7.0f};
  QuantCounts e4, e5, e2;
  quantized({Scaling::TensorDelayed, Element::E4M3}, {x[0], x[1]}, 1, 2, false, &e4);
  quantized({Scaling::TensorDelayed, Element::E5M2}, {x[2], x[3]}, 1, 2, false, &e5);
  quantized({Scaling::Mx, Element::E2M1, 32}, {x[4], x[5]}, 1, 2, false, &e2);  // X = 2^(floor(log2 7) - 2) = 1
  EXPECT_EQ(e4.saturated, 1);
  EXPECT_EQ(e5.saturated, 1);
  EXPECT_EQ(e2.saturated, 1);  // 7 is the midpoint between 6 and 8: rounds to the even 8, beyond 6
}

TEST(PrecisionQuantize, MxScalesFollowTheSpecificationAndSaturate) {
  // amax 500: X = 2^(8 - 8) = 1, so 500 saturates to 448 (the MX conversion clamps), and 1.0 stays exact.
  std::vector<float> x(32, 1.0f);
  x[3] = 500.0f;
  QuantCounts c;
  const OperandFormat mx{Scaling::Mx, Element::E4M3, 32};
  const auto q = quantized(mx, x, 1, 32, false, &c);
  EXPECT_EQ(q[3], 448.0f);
  EXPECT_EQ(q[0], 1.0f);
  EXPECT_EQ(c.saturated, 1);
  EXPECT_EQ(c.bytes, 32 + 1);  // E8M0 scale: one byte
}

TEST(PrecisionQuantize, Nvfp4MapsEachTileMaximumOntoSix) {
  auto x = normal_floats(64, 4);
  x[7] = 10.0f;  // the tensor's amax: tile scale e4m3(448) = 448, so 10 -> 6 -> 10 exactly
  QuantCounts c;
  const OperandFormat nv{Scaling::Nvfp4, Element::E2M1, 16};
  const auto q = quantized(nv, x, 1, 64, false, &c);
  EXPECT_EQ(q[7], 10.0f);
  EXPECT_EQ(c.bytes, 64 / 2 + 4 * 1 + 4);  // 4-bit elements, an E4M3 scale per tile, an fp32 tensor scale
  for (int t = 0; t < 4; ++t) {  // every tile's largest |x| decodes within E4M3's step of its scale
    float amax = 0, qmax = 0;
    for (int i = 16 * t; i < 16 * t + 16; ++i) amax = std::max(amax, std::fabs(x[i])), qmax = std::max(qmax, std::fabs(q[i]));
    EXPECT_NEAR(qmax, amax, amax / 8) << t;
  }
}

TEST(PrecisionQuantize, StochasticRoundingIsSeededAndUnbiasedOverATensor) {
  const OperandFormat nv{Scaling::Nvfp4, Element::E2M1, 16, false, true};
  const auto x = normal_floats(4096, 6);
  EXPECT_EQ(quantized(nv, x, 64, 64, false, nullptr, 9), quantized(nv, x, 64, 64, false, nullptr, 9));
  EXPECT_NE(quantized(nv, x, 64, 64, false, nullptr, 9), quantized(nv, x, 64, 64, false, nullptr, 10));
  std::vector<double> mean(x.size(), 0);
  const int draws = 400;
  for (int s = 0; s < draws; ++s) {
    const auto q = quantized(nv, x, 64, 64, false, nullptr, 100 + s);
    for (size_t i = 0; i < x.size(); ++i) mean[i] += q[i] / draws;
  }
  double bias = 0, rne = 0;
  const auto nearest = quantized({Scaling::Nvfp4, Element::E2M1, 16}, x, 64, 64, false);
  for (size_t i = 0; i < x.size(); ++i) bias += mean[i] - x[i], rne += std::fabs(nearest[i] - x[i]);
  EXPECT_LT(std::fabs(bias) / x.size(), 0.01 * rne / x.size());
}

// A third of the fp32 patterns with 12 trailing zero bits, every other one with its halfway bit set: the rounding
// points of every small format and bf16, their neighbours, subnormals, Inf and NaN.
std::vector<float> rounding_points() {
  std::vector<float> x;
  for (uint32_t top = 0; top < (1u << 20); top += 3) x.push_back(std::bit_cast<float>(top << 12 | (top & 1 ? 0x800 : 0)));
  return x;
}

TEST(PrecisionQuantize, Avx2LoopsEqualThePortableOnes) {
  if (simd_level() < Simd::avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  // Every rounding point of the formats (as the element-format test), scaled by tensor scales and MX scales.
  const std::vector<float> x = rounding_points();
  const int64_t cols = 1000, rows = static_cast<int64_t>(x.size()) / cols;
  for (const OperandFormat f : {OperandFormat{Scaling::TensorCurrent, Element::E4M3}, OperandFormat{Scaling::Mx, Element::E5M2, 32},
                                OperandFormat{Scaling::Nvfp4, Element::E2M1, 16}, OperandFormat{Scaling::Block, Element::E4M3, 128},
                                OperandFormat{Scaling::Bf16},
                                // stochastic rounding: the same random bits per element, the same decisions
                                OperandFormat{Scaling::Nvfp4, Element::E2M1, 16, false, true},
                                OperandFormat{Scaling::Mx, Element::E5M2, 32, false, true}}) {
    QuantCounts vc, pc;
    const auto vec = quantized(f, x, rows, cols, false, &vc);
    std::vector<float> port;
    {
      ScopedSimdLimit scalar(Simd::scalar);
      port = quantized(f, x, rows, cols, false, &pc);
    }
    for (size_t i = 0; i < vec.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(vec[i]), std::bit_cast<uint32_t>(port[i])) << i << " " << std::hexfloat << x[i];
    EXPECT_EQ(vc.underflow, pc.underflow);
    EXPECT_EQ(vc.saturated, pc.saturated);
  }
  // The Hadamard transform along rows (the wgrad inputs'), 13 columns: the AVX2 body and its scalar tail.
  auto hv = normal_floats(32 * 13, 3), hp = hv;
  hadamard16(hv.data(), 32, 13, true, 0xA5C3);
  {
    ScopedSimdLimit scalar(Simd::scalar);
    hadamard16(hp.data(), 32, 13, true, 0xA5C3);
  }
  EXPECT_EQ(hv, hp);
  const auto a = normal_floats(37 * 300, 1), b = normal_floats(300 * 45, 2);
  std::vector<float> cv(37 * 45), cp(cv.size());
  gemm_accumulate(Accumulate::Promoted, a.data(), b.data(), 37, 45, 300, 0.0f, cv.data(), 45);
  {
    ScopedSimdLimit scalar(Simd::scalar);
    gemm_accumulate(Accumulate::Promoted, a.data(), b.data(), 37, 45, 300, 0.0f, cp.data(), 45);
  }
  EXPECT_EQ(cv, cp);
}

TEST(PrecisionAmaxHistory, RollsAsTransformerEngineDocuments) {
  AmaxHistory h(3);
  EXPECT_EQ(h.scale(), 1.0f);  // no amax seen yet
  const float amaxes[] = {8, 1, 1, 1, 0, 0, 0};
  const float scales[] = {448.0f / 8, 448.0f / 8, 448.0f / 8, 448.0f / 1, 448.0f / 1, 448.0f / 1, 448.0f / 1};
  for (int step = 0; step < 7; ++step) {
    h.record(amaxes[step]);
    h.record(amaxes[step] / 2);  // a second call in the step: the step's amax is the larger
    h.roll(448.0f);
    EXPECT_EQ(h.scale(), scales[step]) << "after step " << step;  // 8 leaves the window after 3 steps; zeros keep it
  }
  EXPECT_THROW(AmaxHistory(0), std::invalid_argument);
}

TEST(PrecisionHadamard, IsOrthonormalSoTheWgradProductStays) {
  const int64_t k = 48, m = 5, n = 7;  // k: 3 whole groups of 16
  auto x = normal_floats(k * m, 7), dy = normal_floats(k * n, 8);
  std::vector<float> ref(m * n), out(m * n);
  cpu::gemm<float>(true, false, m, n, k, x.data(), dy.data(), 0.0f, ref.data());
  double norm0 = 0, norm1 = 0;
  for (float v : x) norm0 += v * v;
  hadamard16(x.data(), k, m, true, 0xA5C3);
  hadamard16(dy.data(), k, n, true, 0xA5C3);
  for (float v : x) norm1 += v * v;
  EXPECT_NEAR(norm1, norm0, 1e-4 * norm0);
  cpu::gemm<float>(true, false, m, n, k, x.data(), dy.data(), 0.0f, out.data());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-4f);
}

// DeepSeek-V3's reason for promoting: a 14-bit accumulator drops every addend below its last kept bit.
TEST(PrecisionAccumulate, LimitedAccumulatorDropsSmallAddendsAndPromotionRecoversThem) {
  const int64_t k = 4096;
  std::vector<float> a(k, 0x1p-14f), b(k, 1.0f);
  a[0] = 1.0f;
  float exact = 0, limited = 0, promoted = 0;
  gemm_accumulate(Accumulate::Fp32, a.data(), b.data(), 1, 1, k, 0.0f, &exact, 1);
  gemm_accumulate(Accumulate::Limited, a.data(), b.data(), 1, 1, k, 0.0f, &limited, 1);
  gemm_accumulate(Accumulate::Promoted, a.data(), b.data(), 1, 1, k, 0.0f, &promoted, 1);
  EXPECT_FLOAT_EQ(exact, 1.0f + 4095 * 0x1p-14f);
  EXPECT_EQ(limited, 1.0f);                           // each 2^-14 falls below 1's last kept bit (2^-13)
  EXPECT_EQ(promoted, 1.0f + 31 * 128 * 0x1p-14f);    // the first interval loses its 127, the other 31 are exact
  // On random data the limited accumulator's error grows with k; promotion keeps it near fp32's.
  const auto x = normal_floats(4 * k, 11), y = normal_floats(k * 4, 12);
  std::vector<float> e(16), l(16), p(16);
  gemm_accumulate(Accumulate::Fp32, x.data(), y.data(), 4, 4, k, 0.0f, e.data(), 4);
  gemm_accumulate(Accumulate::Limited, x.data(), y.data(), 4, 4, k, 0.0f, l.data(), 4);
  gemm_accumulate(Accumulate::Promoted, x.data(), y.data(), 4, 4, k, 0.0f, p.data(), 4);
  double el = 0, ep = 0, n2 = 0;
  for (int i = 0; i < 16; ++i) el += (l[i] - e[i]) * (l[i] - e[i]), ep += (p[i] - e[i]) * (p[i] - e[i]), n2 += e[i] * e[i];
  EXPECT_GT(el, 10 * ep);
}

// Each pass of a quantised linear layer reads its two operands quantised as the recipe says for their roles (the
// straight-through gradient): compared with quantize() on the same operands and a double-precision product.
TEST(PrecisionQuantLinear, EveryPassReadsItsRolesQuantisedOperands) {
  const int64_t m = 33, k = 160, n = 40;
  const auto x = normal_floats(m * k, 21), w = normal_floats(k * n, 22, 0.1f), dy = normal_floats(m * n, 23, 1e-3f);
  for (const std::string& name : recipe_names()) {
    const Recipe r = parse_recipe(name);
    PrecisionConfig cfg;
    cfg.recipe = r, cfg.seed = 5;
    QuantLinear site("t", r, cfg);
    // reference operands: fprop x[m,k] (k along columns) and w[k,n] (k down rows); dgrad dy[m,n] and w^T (w stored
    // [k,n], reduction n along its columns); wgrad x^T (x stored [m,k], reduction m down its rows) and dy.
    struct Case {
      Pass pass;
      bool ta, tb;
      int64_t M, N, K;
      const std::vector<float>* a;
      int64_t lda;
      const std::vector<float>* b;
      int64_t ldb;
    };
    const Case cases[] = {{Pass::Fprop, false, false, m, n, k, &x, k, &w, n},
                          {Pass::Dgrad, false, true, m, k, n, &dy, n, &w, n},
                          {Pass::Wgrad, true, false, k, n, m, &x, k, &dy, n}};
    for (const Case& c : cases) {
      const Role ra = c.pass == Pass::Dgrad ? Role::Grad : Role::Input;
      const Role rb = c.pass == Pass::Wgrad ? Role::Grad : Role::Weight;
      const OperandFormat fa = operand_format(r, ra, c.pass), fb = operand_format(r, rb, c.pass);
      // Stochastic rounding is seeded per call and the Hadamard transform has its own test below; delayed scaling's
      // first step quantises with scale 1, as the helper does.
      if (fa.stochastic || fb.stochastic || fa.hadamard || fb.hadamard) continue;
      std::vector<float> out(c.M * c.N);
      site.gemm(c.pass, 0, c.ta, c.tb, c.M, c.N, c.K, c.a->data(), c.lda, c.b->data(), c.ldb, 0.0f, out.data(), c.N);
      const int64_t ar = c.ta ? c.K : c.M, ac = c.ta ? c.M : c.K, br = c.tb ? c.N : c.K, bc = c.tb ? c.K : c.N;
      const auto qa = quantized(fa, *c.a, ar, ac, c.ta), qb = quantized(fb, *c.b, br, bc, !c.tb);
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j) {
          double s = 0, size = 0;  // the product and the sum of its terms' magnitudes (fp32's rounding scales with it)
          for (int64_t kk = 0; kk < c.K; ++kk) {
            const double t = static_cast<double>(c.ta ? qa[kk * ac + i] : qa[i * ac + kk]) *
                             (c.tb ? qb[j * bc + kk] : qb[kk * bc + j]);
            s += t, size += std::fabs(t);
          }
          ASSERT_NEAR(out[i * c.N + j], s, 1e-6 * size + 1e-30) << name << " pass " << static_cast<int>(c.pass);
        }
    }
  }
}

TEST(PrecisionQuantLinear, Nvfp4WgradEqualsTheProductOfTransformedOperands) {
  // The Hadamard transform cancels in the product: with it, nvfp4's wgrad stays close to fp32 (its error is the
  // quantisation's, which the transform spreads).
  const int64_t m = 64, k = 32, n = 24;
  const auto x = normal_floats(m * k, 31), dy = normal_floats(m * n, 32);
  PrecisionConfig cfg;
  cfg.recipe = Recipe::Nvfp4;
  QuantLinear site("t", Recipe::Nvfp4, cfg);
  site.set_checking(true);
  std::vector<float> out(k * n);
  site.gemm(Pass::Wgrad, 0, true, false, k, n, m, x.data(), k, dy.data(), n, 0.0f, out.data(), n);
  const double err = site.stats().rel_err(Pass::Wgrad);
  EXPECT_GT(err, 0.01);  // 4-bit operands are not exact
  EXPECT_LT(err, 0.5);
}

// Each site rounds with its own stream (layers' gradient rounding errors are not correlated), and a weight whose one
// quantised copy serves fprop and dgrad counts its bytes once.
TEST(PrecisionQuantLinear, SitesRoundIndependentlyAndCountAWeightCopyOnce) {
  // dgrad: dy [64, 48] times w^T, w stored [32, 48]; fprop: x [64, 32] times the same w read as [32, 48].
  const auto dy = normal_floats(64 * 48, 51, 0.01f), w = normal_floats(32 * 48, 52);
  PrecisionConfig cfg;
  cfg.recipe = Recipe::Nvfp4;
  QuantLinear a("block0.expert.fc1", Recipe::Nvfp4, cfg), b("block1.expert.fc1", Recipe::Nvfp4, cfg);
  std::vector<float> oa(64 * 32), ob(oa.size());
  a.gemm(Pass::Dgrad, 0, false, true, 64, 32, 48, dy.data(), 48, w.data(), 48, 0.0f, oa.data(), 32);
  b.gemm(Pass::Dgrad, 0, false, true, 64, 32, 48, dy.data(), 48, w.data(), 48, 0.0f, ob.data(), 32);
  EXPECT_NE(oa, ob);
  cfg.recipe = Recipe::Fp8Blockwise;
  QuantLinear site("s", Recipe::Fp8Blockwise, cfg);
  const auto x = normal_floats(64 * 32, 53);
  std::vector<float> y(64 * 48), dx(64 * 32);
  site.gemm(Pass::Fprop, 0, false, false, 64, 48, 32, x.data(), 32, w.data(), 48, 0.0f, y.data(), 48);
  site.gemm(Pass::Dgrad, 0, false, true, 64, 32, 48, dy.data(), 48, w.data(), 48, 0.0f, dx.data(), 32);
  EXPECT_EQ(site.stats().operands[static_cast<int>(Role::Weight)].bytes, 32 * 48 + 4);  // one 128x128 block
}

TEST(PrecisionRecipes, NamesAndErrorsNameTheAxis) {
  for (const std::string& n : recipe_names()) EXPECT_EQ(name_of(parse_recipe(n)), n);
  try {
    parse_recipe("fp6");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("precision: unknown 'fp6'"), std::string::npos);
  }
  EXPECT_THROW(parse_accumulate("fp22"), std::invalid_argument);
  PrecisionConfig c;
  c.recipe = Recipe::Fp8Delayed, c.amax_history = 0;
  EXPECT_THROW(Precision(c, 2), std::invalid_argument);
  c.amax_history = 16, c.bf16_blocks = 3;
  EXPECT_THROW(Precision(c, 2), std::invalid_argument);
  EXPECT_EQ(blocks_kept_in_bf16(Recipe::Nvfp4, 2), 0);
  EXPECT_EQ(blocks_kept_in_bf16(Recipe::Nvfp4, 62), 9);
  EXPECT_EQ(blocks_kept_in_bf16(Recipe::Mxfp8, 62), 0);
  c.bf16_blocks = 1;
  const Precision p(c, 2);
  EXPECT_EQ(p.site(0, Site::ExpertFc1)->recipe(), Recipe::Fp8Delayed);
  EXPECT_EQ(p.site(1, Site::AttnQkv)->recipe(), Recipe::Bf16);
  EXPECT_EQ(Precision(PrecisionConfig{}, 2).site(0, Site::ExpertFc1), nullptr);
}

// AGoQ's storage: symmetric integers per 32 elements of a row; the decoded value is within half a step of the input,
// zeros and non-finite values stay, and the bytes are the elements at their width plus a scale per block.
TEST(PrecisionActivationStore, IntegerBlocksRoundTripWithinHalfAStep) {
  for (const auto& [storage, qmax, bits] : {std::tuple{ActivationStorage::Int8, 127.0f, 8},
                                           std::tuple{ActivationStorage::Int4, 7.0f, 4}}) {
    auto x = normal_floats(3 * 70, 41);  // rows of 70: blocks of 32, 32 and 6
    std::fill(x.begin() + 70, x.begin() + 102, 0.0f);  // an all-zero block
    x[150] = NAN;
    const auto before = x;
    ActivationStore store(storage);
    store.quantised(x.data(), 3, 70, LayerType::Moe);
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t b = 0; b < 70; b += 32) {
        float amax = 0;
        for (int64_t i = b; i < std::min<int64_t>(70, b + 32); ++i)
          if (std::isfinite(before[r * 70 + i])) amax = std::max(amax, std::fabs(before[r * 70 + i]));
        for (int64_t i = b; i < std::min<int64_t>(70, b + 32); ++i) {
          const size_t at = static_cast<size_t>(r * 70 + i);
          if (!std::isfinite(before[at])) {
            EXPECT_TRUE(std::isnan(x[at]));
            continue;
          }
          EXPECT_LE(std::fabs(x[at] - before[at]), amax / qmax / 2 * 1.0001f) << at;
        }
      }
    for (int i = 70; i < 102; ++i) EXPECT_EQ(x[i], 0.0f);
    EXPECT_EQ(store.full_bytes(), 4.0 * 210);
    EXPECT_EQ(store.stored_bytes(), 210.0 * bits / 8 + 4 * 9 + 4 /* the NaN at full width */);
    EXPECT_EQ(store.mean_element_bits(), (210.0 * bits + 32) / 210);
  }
  ActivationStore full(ActivationStorage::Full);
  auto y = normal_floats(64, 42);
  const auto same = y;
  full.quantised(y.data(), 2, 32, LayerType::Norm);
  full.kept(10);
  EXPECT_EQ(y, same);
  EXPECT_EQ(full.stored_bytes(), full.full_bytes());
  EXPECT_EQ(full.mean_element_bits(), 32.0);
  EXPECT_THROW(parse_activation_storage("int2"), std::invalid_argument);
}

// layer_aware stores each layer type as its own storage says, code for code what that storage stores alone, and
// counts the bytes and the mean width over all of them.
TEST(PrecisionActivationStore, LayerAwareStoresEachTypeAsItsOwnStorage) {
  const LayerStorage widths = {ActivationStorage::Full, ActivationStorage::Int8, ActivationStorage::Int4};
  ActivationStore aware(ActivationStorage::LayerAware, widths);
  double stored = 0;
  for (int t = 0; t < kLayerTypes; ++t) {
    auto x = normal_floats(4 * 64, 50 + t), alone = x;
    const auto type = static_cast<LayerType>(t);
    EXPECT_EQ(aware.storage_of(type), widths[t]);
    aware.quantised(x.data(), 4, 64, type);
    ActivationStore uniform(widths[t]);
    uniform.quantised(alone.data(), 4, 64, LayerType::Norm);  // a uniform storage ignores the type
    EXPECT_EQ(x, alone) << name_of(type);
    stored += uniform.stored_bytes();
  }
  EXPECT_EQ(aware.stored_bytes(), stored);
  EXPECT_EQ(aware.full_bytes(), 3 * 4 * 256.0);
  EXPECT_EQ(aware.mean_element_bits(), (32 + 8 + 4) / 3.0);
  // A uniform storage ignores the per-type widths.
  EXPECT_EQ(ActivationStore(ActivationStorage::Int8, widths).storage_of(LayerType::Norm), ActivationStorage::Int8);
  // A layer type's storage is one of full, int8, int4: errors name its axis.
  EXPECT_EQ(parse_activation_storage("layer_aware"), ActivationStorage::LayerAware);
  try {
    parse_activation_storage("layer_aware", "moe_storage", true);
    ADD_FAILURE() << "layer_aware is not a layer type's storage";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), testing::StartsWith("moe_storage: unknown 'layer_aware' (one of full, int8, int4)"));
  }
  EXPECT_THROW(ActivationStore(ActivationStorage::LayerAware,
                               {ActivationStorage::Int8, ActivationStorage::LayerAware, ActivationStorage::Int4}),
               std::invalid_argument);
}

// The AVX2 block loop of the integer storage stores what the portable loop stores, bit for bit: every rounding point
// of the bf16 grid (with its halfway neighbours), NaN, Inf, zero blocks, and rows of 1000 (a partial last block).
TEST(PrecisionActivationStore, Avx2BlocksEqualThePortableOnes) {
  if (simd_level() < Simd::avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  std::vector<float> x = rounding_points();
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero block
  const int64_t cols = 1000, rows = static_cast<int64_t>(x.size()) / cols;
  x.resize(static_cast<size_t>(rows * cols));
  for (const ActivationStorage storage : {ActivationStorage::Int8, ActivationStorage::Int4}) {
    auto vec = x, port = x;
    ActivationStore v(storage), p(storage);
    v.quantised(vec.data(), rows, cols, LayerType::Moe);
    {
      ScopedSimdLimit scalar(Simd::scalar);
      p.quantised(port.data(), rows, cols, LayerType::Moe);
    }
    for (size_t i = 0; i < vec.size(); ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(vec[i]), std::bit_cast<uint32_t>(port[i])) << i << " " << std::hexfloat << x[i];
    EXPECT_EQ(v.stored_bytes(), p.stored_bytes());
    EXPECT_EQ(v.mean_element_bits(), p.mean_element_bits());
    EXPECT_GT(v.mean_element_bits(), storage == ActivationStorage::Int8 ? 8.0 : 4.0) << "the grid holds NaN and Inf";
  }
}

// precision=fp32 is today's model: the same losses bit for bit as a model without a recipe.
TEST(PrecisionLm, Fp32IsTheUnquantisedModelBitForBit) {
  LmConfig c;
  c.layers = 2, c.heads = 2, c.seq = 8;
  c.moe.hidden = 16, c.moe.ffn = 24, c.moe.experts = 4, c.moe.topk = 2, c.moe.shared_experts = 1;
  MoeLm<float> plain(c, 1), with(c, 1), fp8(c, 1);
  const Precision none(PrecisionConfig{}, 2);
  PrecisionConfig q;
  q.recipe = Recipe::Fp8Current;
  const Precision current(q, 2);
  with.set_precision(none);
  fp8.set_precision(current);
  plain.init(3), with.init(3), fp8.init(3);
  std::vector<uint8_t> tokens(2 * 9);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint8_t>("a quick brown fox"[i % 17]);
  const float a = plain.forward(tokens.data(), 2), b = with.forward(tokens.data(), 2), f = fp8.forward(tokens.data(), 2);
  EXPECT_EQ(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b));
  EXPECT_NE(a, f);
  EXPECT_NEAR(a, f, 0.05 * a);
  plain.backward(), with.backward();
  for (size_t i = 0; i < plain.parameters().size(); ++i) {
    const auto ga = plain.parameters()[i].second.second, gb = with.parameters()[i].second.second;
    ASSERT_TRUE(std::equal(ga.begin(), ga.end(), gb.begin())) << plain.parameters()[i].first;
  }
  EXPECT_THROW(MoeLm<float>(LmConfig{.layers = 3, .moe = c.moe}, 1).set_precision(current), std::invalid_argument);
  // Storing the saved activations at full width changes nothing; int4 changes the gradients.
  MoeLm<float> stored(c, 1), coarse(c, 1);
  stored.init(3), coarse.init(3);
  ActivationStore full(ActivationStorage::Full), int4(ActivationStorage::Int4);
  stored.forward(tokens.data(), 2), coarse.forward(tokens.data(), 2);
  stored.store_activations(full), coarse.store_activations(int4);
  stored.backward(), coarse.backward();
  const auto gs = stored.parameters()[2].second.second, gp = plain.parameters()[2].second.second,
             gc = coarse.parameters()[2].second.second;
  EXPECT_TRUE(std::equal(gs.begin(), gs.end(), gp.begin())) << stored.parameters()[2].first;
  EXPECT_FALSE(std::equal(gc.begin(), gc.end(), gp.begin()));
  EXPECT_LT(int4.stored_bytes(), 0.5 * int4.full_bytes());
}

}  // namespace
}  // namespace mlsb::moe_train::precision
