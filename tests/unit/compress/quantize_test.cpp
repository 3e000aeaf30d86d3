#include "workloads/compress/quantize.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "workloads/compress/error_metrics.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

struct RoundTrip {
  std::vector<uint8_t> stream;
  Tensor out;
};

RoundTrip round_trip(Codec& codec, const Tensor& in) {
  RoundTrip r;
  r.stream.resize(codec.max_compressed_bytes(in.view()));
  r.stream.resize(codec.compress(in.view(), r.stream));
  r.out.dtype = in.dtype;
  r.out.shape = in.shape;
  r.out.data.assign(in.data.size(), 0xAB);
  codec.decompress(r.stream, r.out.mutable_view());
  return r;
}

double rel_l2(Codec& codec, const Tensor& in) {
  const RoundTrip r = round_trip(codec, in);
  return compare_tensors(in.view(), r.out.view()).rel_l2;
}

TEST(CompressQuantize, Fp8CodesReencodeToThemselves) {
  for (int c = 0; c < 256; ++c) {
    const uint8_t q = static_cast<uint8_t>(c);
    const float f = e4m3_to_float(q);
    if ((q & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(f));
      EXPECT_EQ(float_to_e4m3(f), q);  // the NaN code of the same sign
    } else {
      EXPECT_EQ(float_to_e4m3(f), q) << c;
    }
    const float g = e5m2_to_float(q);
    if ((q & 0x7F) > 0x7C) {
      EXPECT_TRUE(std::isnan(g)) << c;
    } else if ((q & 0x7F) == 0x7C) {
      EXPECT_TRUE(std::isinf(g));
      EXPECT_EQ(float_to_e5m2(g), (q & 0x80) | 0x7B);  // Inf saturates
    } else {
      EXPECT_EQ(float_to_e5m2(g), q) << c;
    }
  }
}

TEST(CompressQuantize, Fp8EdgeValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), 0x1p-9f);
  EXPECT_EQ(e4m3_to_float(0x08), 0x1p-6f);
  EXPECT_EQ(float_to_e4m3(1.0f), 0x38);
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);   // tie between 1 and 1.125: even
  EXPECT_EQ(float_to_e4m3(1.1875f), 0x3A);   // tie between 1.125 and 1.25: even
  EXPECT_EQ(float_to_e4m3(0x1p-10f), 0x00);  // half the smallest subnormal: even zero
  EXPECT_EQ(float_to_e4m3(0x1.8p-10f), 0x01);
  EXPECT_EQ(float_to_e4m3(1000.0f), 0x7E);
  EXPECT_EQ(float_to_e4m3(-inf), 0xFE);
  EXPECT_EQ(float_to_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_e4m3(-0.0f), 0x80);
  EXPECT_EQ(e5m2_to_float(0x7B), 57344.0f);
  EXPECT_EQ(e5m2_to_float(0x01), 0x1p-16f);
  EXPECT_EQ(e5m2_to_float(0xFC), -inf);
  EXPECT_EQ(float_to_e5m2(1.0f), 0x3C);
  EXPECT_EQ(float_to_e5m2(1.125f), 0x3C);
  EXPECT_EQ(float_to_e5m2(1.375f), 0x3E);
  EXPECT_EQ(float_to_e5m2(1e9f), 0x7B);
  EXPECT_EQ(float_to_e5m2(inf), 0x7B);
  EXPECT_EQ(float_to_e5m2(-std::numeric_limits<float>::quiet_NaN()), 0xFE);
}

TEST(CompressQuantize, GoldenInt8Stream) {
  const float x[] = {1.0f, -0.5f, 0.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  const Tensor t{"x", DType::F32, {5}, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(x),
                                                           reinterpret_cast<const uint8_t*>(x) + 20)};
  auto codec = make_quant_codec(QuantKind::Int8Block, 4);
  const RoundTrip r = round_trip(*codec, t);
  const float s0 = 1.0f / 127.0f, s1 = 2.0f / 127.0f;
  std::vector<uint8_t> want = {'M', 'Q', 'B', '1', 3, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0};
  for (float s : {s0, s1}) {
    const uint32_t b = std::bit_cast<uint32_t>(s);
    for (int i = 0; i < 4; ++i) want.push_back(static_cast<uint8_t>(b >> (8 * i)));
  }
  // -0.5 / (1/127) = -63.5: the tie rounds to even -64 (0xC0); NaN is -128 (0x80).
  for (uint8_t c : {0x7F, 0xC0, 0x00, 0x80, 0x7F}) want.push_back(c);
  EXPECT_EQ(r.stream, want);
  EXPECT_TRUE(std::isnan(load_float(r.out.data.data(), DType::F32, 3)));
  EXPECT_EQ(load_float(r.out.data.data(), DType::F32, 4), 127 * s1);
}

TEST(CompressQuantize, ErrorBoundsOnGaussian) {
  const Tensor g = generate("gaussian", DType::F32, 100003, 0.02, 1);
  EXPECT_LT(rel_l2(*make_quant_codec(QuantKind::Int8Block, 128), g), 0.01);
  EXPECT_LT(rel_l2(*make_quant_codec(QuantKind::Fp8E4M3, 128), g), 0.04);
  EXPECT_LT(rel_l2(*make_quant_codec(QuantKind::Fp8E5M2, 128), g), 0.08);
  const double bf = rel_l2(*make_quant_codec(QuantKind::CastBf16, 0), g);
  EXPECT_GT(bf, 0x1p-11);
  EXPECT_LT(bf, 0x1p-8);
  EXPECT_LT(rel_l2(*make_quant_codec(QuantKind::CastFp16, 0), g), 0x1p-11);
}

TEST(CompressQuantize, Int8ElementErrorWithinHalfAStep) {
  const Tensor g = generate("laplace", DType::F32, 1000, 1.0, 2);
  auto codec = make_quant_codec(QuantKind::Int8Block, 64);
  const RoundTrip r = round_trip(*codec, g);
  for (int64_t b = 0; b < 1000; b += 64) {
    float absmax = 0;
    for (int64_t i = b; i < std::min<int64_t>(1000, b + 64); ++i)
      absmax = std::max(absmax, std::fabs(load_float(g.data.data(), DType::F32, i)));
    for (int64_t i = b; i < std::min<int64_t>(1000, b + 64); ++i)
      ASSERT_LE(std::fabs(load_float(g.data.data(), DType::F32, i) - load_float(r.out.data.data(), DType::F32, i)),
                absmax / 127 * 0.5001f);
  }
}

TEST(CompressQuantize, ScaledFp16DoesNotOverflowOrUnderflow) {
  auto codec = make_quant_codec(QuantKind::CastFp16, 0);
  for (double sigma : {5e5, 1e-9}) {
    const Tensor u = generate("uniform", DType::F32, 10000, sigma, 3);
    const RoundTrip r = round_trip(*codec, u);
    const ErrorMetrics m = compare_tensors(u.view(), r.out.view());
    EXPECT_EQ(m.nonfinite, 0) << sigma;
    EXPECT_LT(m.rel_l2, 0x1p-11) << sigma;
  }
}

TEST(CompressQuantize, BfloatInputCastIsExact) {
  const Tensor b = generate("gaussian", DType::BF16, 999, 1.0, 4);
  const RoundTrip r = round_trip(*make_quant_codec(QuantKind::CastBf16, 0), b);
  EXPECT_EQ(r.out.data, b.data);
}

TEST(CompressQuantize, PathologicalKeepsNonFinitePositions) {
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    const Tensor p = generate("pathological", dt, 1001, 1.0, 5);
    for (QuantKind k : {QuantKind::CastBf16, QuantKind::CastFp16, QuantKind::Int8Block, QuantKind::Fp8E4M3,
                        QuantKind::Fp8E5M2}) {
      auto codec = make_quant_codec(k, 32);
      const RoundTrip r = round_trip(*codec, p);
      for (int64_t i = 0; i < p.count(); ++i) {
        const float a = load_float(p.data.data(), dt, i), b = load_float(r.out.data.data(), dt, i);
        if (std::isnan(a)) {
          ASSERT_TRUE(std::isnan(b)) << codec->name() << " " << i;
        } else if (!std::isfinite(a)) {
          ASSERT_FALSE(std::isfinite(b)) << codec->name() << " " << i;
        } else if (k == QuantKind::CastBf16) {
          uint8_t want[4];
          store_float(want, dt, 0, bf16_to_float(float_to_bf16(a)));
          ASSERT_EQ(b, load_float(want, dt, 0));  // bf16 rounding, then the original dtype (may overflow)
        } else if (k == QuantKind::CastFp16 && std::fabs(a) > 0x1.ffep127f) {
          ASSERT_TRUE(std::isinf(b));  // within rounding of FLT_MAX: rounds up to 2^128 (documented)
        } else {
          ASSERT_TRUE(std::isfinite(b)) << codec->name() << " " << to_string(dt) << " " << i << " " << a;
        }
        if (std::isnan(a) && k != QuantKind::Int8Block) {
          ASSERT_EQ(std::signbit(a), std::signbit(b));
        }
      }
    }
  }
}

TEST(CompressQuantize, EmptyAndShortBlocks) {
  for (QuantKind k : {QuantKind::CastBf16, QuantKind::CastFp16, QuantKind::Int8Block, QuantKind::Fp8E4M3}) {
    auto codec = make_quant_codec(k, 7);
    const Tensor empty = generate("gaussian", DType::F16, 0, 1.0, 1);
    EXPECT_EQ(round_trip(*codec, empty).stream.size(), k == QuantKind::CastFp16 ? 20u : k == QuantKind::CastBf16 ? 16u : 20u);
    const Tensor one = generate("gaussian", DType::F16, 1, 1.0, 1);
    EXPECT_EQ(round_trip(*codec, one).out.data.size(), 2u);
  }
  const Tensor zeros{"z", DType::F32, {9}, std::vector<uint8_t>(36, 0)};
  EXPECT_EQ(round_trip(*make_quant_codec(QuantKind::Int8Block, 4), zeros).out.data, zeros.data);
  EXPECT_THROW(make_quant_codec(QuantKind::Int8Block, 0), std::invalid_argument);
}

TEST(CompressQuantize, HostileStreamsAreRejected) {
  const Tensor g = generate("gaussian", DType::BF16, 300, 1.0, 6);
  for (QuantKind k : {QuantKind::CastBf16, QuantKind::CastFp16, QuantKind::Int8Block, QuantKind::Fp8E5M2}) {
    auto codec = make_quant_codec(k, 16);
    const RoundTrip r = round_trip(*codec, g);
    Tensor out = r.out;
    for (size_t len = 0; len < r.stream.size(); ++len)
      ASSERT_THROW(codec->decompress({r.stream.data(), len}, out.mutable_view()), CodecError) << len;
    std::vector<uint8_t> longer = r.stream;
    longer.push_back(0);
    EXPECT_THROW(codec->decompress(longer, out.mutable_view()), CodecError);
    std::vector<size_t> header_bytes = {0, 4, 5, 6, 8};
    if (k != QuantKind::CastBf16 && k != QuantKind::CastFp16) header_bytes.push_back(16);  // the block size
    for (size_t byte : header_bytes) {
      std::vector<uint8_t> bad = r.stream;
      bad[byte] ^= 0x41;
      EXPECT_THROW(codec->decompress(bad, out.mutable_view()), CodecError) << codec->name() << " byte " << byte;
    }
    Tensor wrong = out;
    wrong.dtype = DType::F16;
    EXPECT_THROW(codec->decompress(r.stream, wrong.mutable_view()), CodecError);
    // Random corruption of the payload decodes (values change) or is rejected, never crashes.
    uint64_t s = 1;
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<uint8_t> bad = r.stream;
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      bad[(s >> 33) % bad.size()] = static_cast<uint8_t>(s >> 20);
      try {
        codec->decompress(bad, out.mutable_view());
      } catch (const CodecError&) {
      }
    }
  }
  auto int8 = make_quant_codec(QuantKind::Int8Block, 16);
  EXPECT_THROW(int8->decompress(round_trip(*make_quant_codec(QuantKind::Fp8E4M3, 16), g).stream,
                                Tensor(g).mutable_view()),
               CodecError);
}

}  // namespace
}  // namespace mlsb::compress
