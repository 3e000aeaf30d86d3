// The run-time dispatched kernels (util/simd.hpp) of the CPU codecs: the AVX2 path and the portable path
// (forced with ScopedSimdLimit) must write the same streams, equal to the streams of the code before the
// kernels were vectorised (golden hashes), and decode them to the same bytes, on awkward sizes and values.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <random>

#include "unit/compress/codec_test_util.hpp"
#include "util/simd.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/quantize.hpp"

namespace mlsb::compress {
namespace {

constexpr DType kDtypes[] = {DType::F32, DType::F16, DType::BF16};
constexpr QuantKind kKinds[] = {QuantKind::CastBf16, QuantKind::CastFp16, QuantKind::Int8Block, QuantKind::Fp8E4M3,
                                QuantKind::Fp8E5M2};

uint64_t fnv1a(const std::vector<uint8_t>& v) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : v) h = (h ^ b) * 1099511628211ull;
  return h;
}

/// A tensor of n elements of dtype t whose element i has the bits value(i) (its low 16 for 16-bit dtypes).
template <typename F>
Tensor tensor_of(DType t, int64_t n, F value) {
  Tensor out;
  out.dtype = t;
  const size_t size = dtype_size(t);
  out.data.resize(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t v = value(i);
    std::memcpy(&out.data[static_cast<size_t>(i) * size], &v, size);  // little-endian: the low bytes
  }
  return out;
}

/// Random bits, every element but each 7th with an exponent in [2^-9, 2^-1) (so most blocks have ordinary
/// scales); fp16 keeps bits 0-14 of a draw and the fp32 sign.
Tensor golden_lossy_input(DType t, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return tensor_of(t, n, [&](int64_t i) {
    const uint64_t r = rng();
    auto bits = static_cast<uint32_t>(r);
    if (i % 7 != 0) bits = (bits & 0x807FFFFFu) | (static_cast<uint32_t>(118 + r % 8) << 23);
    if (t == DType::F16) return (bits & 0x8000u) | static_cast<uint32_t>((r >> 40) & 0x7FFF);
    return t == DType::BF16 ? bits >> 16 : bits;
  });
}

/// Ordinary values with the awkward ones mixed in: NaNs with payloads (quiet and signalling, both signs), ±Inf,
/// ±0, subnormals, the largest finite values, and values on rounding ties of the narrow formats.
Tensor awkward_input(DType t, int64_t n, uint64_t seed) {
  static constexpr uint32_t kSpecial[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0xFFA00000u, 0x7F800000u,
                                          0xFF800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu,
                                          0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F808000u, 0x43E00000u, 0x47600000u,
                                          0x477FF000u, 0x33800000u, 0x38800000u, 0x3B000000u, 0xC2FE0000u};
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 0.02f);
  return tensor_of(t, n, [&](int64_t) {
    auto bits = std::bit_cast<uint32_t>(gauss(rng));
    if (rng() % 5 == 0) bits = kSpecial[rng() % std::size(kSpecial)];
    if (t == DType::F16) return uint32_t{float_to_fp16(std::bit_cast<float>(bits))};
    return t == DType::BF16 ? bits >> 16 : bits;
  });
}

/// The stream of `codec` on `in` with the kernels capped at `level`.
std::vector<uint8_t> encode_at(Simd level, Codec& codec, TensorView in) {
  ScopedSimdLimit limit(level);
  return test_util::encode(codec, in);
}

/// The decoding of `stream` into a tensor like `like` with the kernels capped at `level`, written `offset` bytes
/// into its buffer (1: a misaligned fp32 output, decoded through a buffer).
std::vector<uint8_t> decode_at(Simd level, Codec& codec, const std::vector<uint8_t>& stream, TensorView like,
                               size_t offset = 0) {
  ScopedSimdLimit limit(level);
  std::vector<uint8_t> out(like.bytes() + offset);
  codec.decompress(stream, MutableTensorView{out.data() + offset, like.count, like.dtype});
  return {out.begin() + static_cast<std::ptrdiff_t>(offset), out.end()};
}

TEST(CompressSimdPaths, TheLimitForcesThePortablePathAndIsRestored) {
  const Simd best = simd_level();
  {
    ScopedSimdLimit limit(Simd::scalar);
    EXPECT_EQ(simd_level(), Simd::scalar);
  }
  EXPECT_EQ(simd_level(), best);
}

TEST(CompressSimdPaths, LossyStreamsEqualThePortablePathOnAwkwardSizes) {
  if (simd_level() < Simd::avx2) GTEST_SKIP() << "this CPU has no AVX2: only the portable path runs";
  for (QuantKind kind : kKinds) {
    for (int64_t block : {1, 3, 8, 31, 32, 37, 128, 1000}) {
      auto codec = make_quant_codec(kind, block);
      for (DType t : kDtypes) {
        for (int64_t n : {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 127, 129, 1000, 4101, 8192 + 37}) {
          const Tensor x = awkward_input(t, n, static_cast<uint64_t>(n * 131 + block));
          const auto portable = encode_at(Simd::scalar, *codec, x.view());
          const auto vector = encode_at(Simd::avx2, *codec, x.view());
          ASSERT_EQ(vector, portable) << codec->name() << " block " << block << " " << to_string(t) << " n " << n;
          // A misaligned fp32 tensor takes the widening path: the same stream.
          std::vector<uint8_t> shifted(x.data.size() + 1);
          if (n > 0) std::memcpy(shifted.data() + 1, x.data.data(), x.data.size());
          EXPECT_EQ(encode_at(Simd::avx2, *codec, {shifted.data() + 1, n, t}), portable) << codec->name() << " n " << n;
          const auto decoded = decode_at(Simd::scalar, *codec, portable, x.view());
          EXPECT_EQ(decode_at(Simd::avx2, *codec, portable, x.view()), decoded) << codec->name() << " n " << n;
          EXPECT_EQ(decode_at(Simd::avx2, *codec, portable, x.view(), 1), decoded) << codec->name() << " n " << n;
        }
      }
    }
  }
}

/// The stream header of a lossy codec (quantize.hpp) for n elements of dtype t, then `payload`.
std::vector<uint8_t> quant_stream(QuantKind kind, DType t, uint64_t n, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> s(kQuantHeaderBytes + payload.size());
  std::memcpy(s.data(), &kQuantMagic, 4);
  s[4] = static_cast<uint8_t>(kind);
  s[5] = static_cast<uint8_t>(t);
  std::memcpy(s.data() + 8, &n, 8);
  std::copy(payload.begin(), payload.end(), s.begin() + kQuantHeaderBytes);
  return s;
}

/// Appends x's little-endian bytes.
template <typename T>
void put_le(std::vector<uint8_t>& v, T x) {
  const auto* p = reinterpret_cast<const uint8_t*>(&x);
  v.insert(v.end(), p, p + sizeof x);
}

TEST(CompressSimdPaths, LossyDecodersEqualThePortablePathOnEveryCodeAndScale) {
  if (simd_level() < Simd::avx2) GTEST_SKIP() << "this CPU has no AVX2: only the portable path runs";
  // Blocks of every code (each at least twice; the last block short) under scales no encoder writes too: ±0,
  // ±Inf, NaNs, subnormals, FLT_MAX; every bf16 value; every fp16 value under scale exponents of both paths.
  constexpr uint32_t kScales[] = {0x3F800000u, 0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                  0xFFA00001u, 0x00000001u, 0x007FFFFFu, 0x7F7FFFFFu, 0xBC23D70Au, 0x3A83126Fu};
  constexpr int64_t kBlock = 512 + 3;
  constexpr int64_t kCount = kBlock * static_cast<int64_t>(std::size(kScales)) - 7;
  for (QuantKind kind : {QuantKind::Int8Block, QuantKind::Fp8E4M3, QuantKind::Fp8E5M2}) {
    std::vector<uint8_t> payload;
    put_le(payload, static_cast<uint32_t>(kBlock));
    for (uint32_t scale : kScales) put_le(payload, scale);
    for (int64_t i = 0; i < kCount; ++i) payload.push_back(static_cast<uint8_t>(i * 7 + i / kBlock));
    auto codec = make_quant_codec(kind, kBlock);
    for (DType t : kDtypes) {
      const auto stream = quant_stream(kind, t, kCount, payload);
      const TensorView like{nullptr, kCount, t};
      const auto portable = decode_at(Simd::scalar, *codec, stream, like);
      EXPECT_EQ(decode_at(Simd::avx2, *codec, stream, like), portable) << codec->name() << " " << to_string(t);
      EXPECT_EQ(decode_at(Simd::avx2, *codec, stream, like, 1), portable) << codec->name() << " " << to_string(t);
    }
  }
  constexpr int64_t kHalves = 65536 + 5;
  std::vector<uint8_t> halves;  // every 16-bit pattern (40503 is odd), then five more
  for (uint32_t h = 0; h < kHalves; ++h) put_le(halves, static_cast<uint16_t>(h * 40503u));
  for (QuantKind kind : {QuantKind::CastBf16, QuantKind::CastFp16}) {
    auto codec = make_quant_codec(kind, 1);
    const bool fp16 = kind == QuantKind::CastFp16;  // the one with a scale exponent
    for (int32_t k : fp16 ? std::vector<int32_t>{0, 14, -126, 126, -127, 127, 163, -1000} : std::vector<int32_t>{0}) {
      std::vector<uint8_t> payload;
      if (fp16) put_le(payload, k);
      payload.insert(payload.end(), halves.begin(), halves.end());
      for (DType t : kDtypes) {
        const auto stream = quant_stream(kind, t, kHalves, payload);
        const TensorView like{nullptr, kHalves, t};
        EXPECT_EQ(decode_at(Simd::avx2, *codec, stream, like), decode_at(Simd::scalar, *codec, stream, like))
            << codec->name() << " k " << k << " " << to_string(t);
      }
    }
  }
}

TEST(CompressSimdPaths, LossyStreamsEqualTheGoldenStreamsOnEveryPath) {
  // FNV-1a of the streams of the scalar codecs before vectorisation (10007 elements, block 37).
  struct Golden {
    QuantKind kind;
    DType dtype;
    uint64_t hash;
  };
  constexpr Golden kGolden[] = {
      {QuantKind::CastBf16, DType::F32, 0xce10bb8a26f6da58ull},
      {QuantKind::CastBf16, DType::F16, 0x0afab96234130487ull},
      {QuantKind::CastBf16, DType::BF16, 0x68f456c45a383984ull},
      {QuantKind::CastFp16, DType::F32, 0x674ae43dce72cca2ull},
      {QuantKind::CastFp16, DType::F16, 0x765b650b3070173aull},
      {QuantKind::CastFp16, DType::BF16, 0x81ee6c49c6c16d8cull},
      {QuantKind::Int8Block, DType::F32, 0x0777dc8cc65ac0fcull},
      {QuantKind::Int8Block, DType::F16, 0x015c1b619a00889bull},
      {QuantKind::Int8Block, DType::BF16, 0x8ad77e19662cb127ull},
      {QuantKind::Fp8E4M3, DType::F32, 0x134333dbf58d9d3full},
      {QuantKind::Fp8E4M3, DType::F16, 0x3580c9dca671d233ull},
      {QuantKind::Fp8E4M3, DType::BF16, 0xa2055fb22fad3fb0ull},
      {QuantKind::Fp8E5M2, DType::F32, 0x800b2ba2fe09fe8aull},
      {QuantKind::Fp8E5M2, DType::F16, 0x3ace94232d5a0d33ull},
      {QuantKind::Fp8E5M2, DType::BF16, 0x64cc534fb18ddc6aull},
  };
  for (const Golden& g : kGolden) {
    auto codec = make_quant_codec(g.kind, 37);
    const Tensor x = golden_lossy_input(g.dtype, 10007, 3);
    for (Simd level : {Simd::scalar, Simd::avx2}) {
      const auto stream = encode_at(level, *codec, x.view());
      EXPECT_EQ(fnv1a(stream), g.hash) << codec->name() << " " << to_string(g.dtype) << " level " << int(level);
      EXPECT_EQ(decode_at(level, *codec, stream, x.view()), decode_at(Simd::scalar, *codec, stream, x.view()));
    }
  }
}

/// Random bits whose exponents are geometric (many symbols, a skewed code); 16-bit dtypes keep the top half.
Tensor golden_exponent_input(DType t, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return tensor_of(t, n, [&](int64_t) {
    const uint64_t r = rng();
    const int e = 120 - std::countr_zero(r | (uint64_t{1} << 20));
    const uint32_t bits = (static_cast<uint32_t>(r >> 63) << 31) | (static_cast<uint32_t>(e) << 23) |
                          (static_cast<uint32_t>(r >> 21) & 0x7FFFFF);
    return t == DType::F32 ? bits : bits >> 16;
  });
}

TEST(CompressSimdPaths, ExponentStreamsEqualTheGoldenStreamsOnEveryPath) {
  // FNV-1a of the streams before vectorisation (chunks of 2^16, 4 streams, L 11): the format is unchanged and
  // these streams still decode to their tensors. 3 * 2^20 elements take the sampled code, 100003 the exact one.
  struct Golden {
    DType dtype;
    int64_t count;
    size_t bytes;
    uint64_t hash;
  };
  constexpr Golden kGolden[] = {
      {DType::BF16, 100003, 125421, 0x981ecc75c70fb80aull}, {DType::BF16, 3 << 20, 3938564, 0x691cd629ee8f22d8ull},
      {DType::F16, 100003, 132689, 0x79ce1aeb23018fa1ull},  {DType::F16, 3 << 20, 4180907, 0x38e0b2418e6bd0b0ull},
      {DType::F32, 100003, 325427, 0xc109beab0d5ee764ull},  {DType::F32, 3 << 20, 10230020, 0x0756f6dfd5978ee8ull},
  };
  const ExponentParams p{.chunk_elems = 1u << 16, .streams_per_chunk = 4, .max_code_len = 11, .threads = 1};
  auto codec = make_exponent_codec(p);
  for (const Golden& g : kGolden) {
    const Tensor x = golden_exponent_input(g.dtype, g.count, 7);
    for (Simd level : {Simd::scalar, Simd::avx2}) {
      const auto stream = encode_at(level, *codec, x.view());
      EXPECT_EQ(stream.size(), g.bytes) << to_string(g.dtype) << " " << g.count << " level " << int(level);
      EXPECT_EQ(fnv1a(stream), g.hash) << to_string(g.dtype) << " " << g.count << " level " << int(level);
      EXPECT_EQ(decode_at(level, *codec, stream, x.view()), x.data) << to_string(g.dtype) << " level " << int(level);
    }
  }
}

TEST(CompressSimdPaths, ExponentStreamsEqualThePortablePathOnAwkwardSizes) {
  for (uint32_t streams : {1u, 3u, 4u, 5u, 8u}) {
    const ExponentParams p{.chunk_elems = 1000, .streams_per_chunk = streams, .max_code_len = 11, .threads = 1};
    auto codec = make_exponent_codec(p);
    for (DType t : kDtypes) {
      for (int64_t n : {0, 1, 2, 31, 32, 33, 63, 64, 65, 255, 257, 999, 1000, 1001, 4097, 20011}) {
        const Tensor x = awkward_input(t, n, static_cast<uint64_t>(n + streams));
        const auto portable = encode_at(Simd::scalar, *codec, x.view());
        EXPECT_EQ(encode_at(Simd::avx2, *codec, x.view()), portable) << to_string(t) << " n " << n << " S " << streams;
        for (Simd level : {Simd::scalar, Simd::avx2})
          EXPECT_EQ(decode_at(level, *codec, portable, x.view()), x.data)
              << to_string(t) << " n " << n << " S " << streams;
      }
    }
  }
}

}  // namespace
}  // namespace mlsb::compress
