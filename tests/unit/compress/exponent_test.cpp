#include "workloads/compress/exponent.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <queue>
#include <random>

#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

using ::testing::HasSubstr;

constexpr DType kDtypes[] = {DType::BF16, DType::F16, DType::F32};

std::vector<uint8_t> compress_exponent(TensorView in, const ExponentParams& p) {
  std::vector<uint8_t> out(exponent_max_compressed_bytes(in, p));
  out.resize(exponent_compress(in, p, out));
  return out;
}

std::vector<uint8_t> decompress_exponent(const std::vector<uint8_t>& stream, int64_t count, DType dtype, int threads = 1) {
  std::vector<uint8_t> out(static_cast<size_t>(count) * dtype_size(dtype));
  exponent_decompress(stream, MutableTensorView{out.data(), count, dtype}, threads);
  return out;
}

// Compresses and decompresses; the decoded bytes must equal the input's. Returns the stream.
std::vector<uint8_t> expect_round_trip(TensorView in, const ExponentParams& p) {
  const auto stream = compress_exponent(in, p);
  const auto back = decompress_exponent(stream, in.count, in.dtype, p.threads);
  EXPECT_TRUE(std::equal(back.begin(), back.end(), in.data))
      << "count " << in.count << " dtype " << to_string(in.dtype) << " chunk " << p.chunk_elems << " S "
      << p.streams_per_chunk << " L " << p.max_code_len;
  return stream;
}

Tensor random_bits(DType dtype, int64_t count, uint64_t seed) {
  Tensor t;
  t.dtype = dtype;
  t.data.resize(static_cast<size_t>(count) * dtype_size(dtype));
  std::mt19937_64 rng(seed);
  for (auto& b : t.data) b = static_cast<uint8_t>(rng());
  return t;
}

double ratio_of(const Tensor& t, const ExponentParams& p = {}) {
  return static_cast<double>(t.data.size()) / static_cast<double>(compress_exponent(t.view(), p).size());
}

TEST(CompressExponent, RoundTripPathologicalEveryDtype) {
  for (DType d : kDtypes) {
    for (int64_t n : {1, 2, 3, 7, 100, 4097, 70001}) {
      const Tensor t = generate("pathological", d, n, 0.02, 11);
      expect_round_trip(t.view(), {});
      expect_round_trip(t.view(), {.chunk_elems = 1000, .streams_per_chunk = 7, .max_code_len = 9, .threads = 2});
    }
  }
}

TEST(CompressExponent, RoundTripRandomSizesAndParams) {
  std::mt19937_64 rng(20240611);
  const auto& dists = distribution_names();
  for (int iter = 0; iter < 150; ++iter) {
    const DType d = kDtypes[rng() % 3];
    const int64_t n = static_cast<int64_t>(rng() % 100001);
    ExponentParams p;
    p.chunk_elems = static_cast<uint32_t>(1 + rng() % (iter % 2 ? 300 : 200000));
    p.streams_per_chunk = static_cast<uint32_t>(1 + rng() % kExponentMaxStreams);
    p.max_code_len = 8 + static_cast<int>(rng() % 5);
    p.threads = 1 + static_cast<int>(rng() % 3);
    const uint64_t seed = rng();
    const Tensor t = iter % 5 == 0 ? random_bits(d, n, seed)
                                   : generate(dists[rng() % dists.size()], d, n, 0.001 + (rng() % 1000) * 1e-3, seed);
    const auto stream = expect_round_trip(t.view(), p);
    EXPECT_LE(stream.size(), exponent_max_compressed_bytes(t.view(), p));
  }
}

TEST(CompressExponent, EmptyTensor) {
  for (DType d : kDtypes) {
    const Tensor t = generate("gaussian", d, 0, 0.02, 1);
    const auto stream = expect_round_trip(t.view(), {});
    EXPECT_EQ(stream.size(), kExponentHeaderBytes);
    EXPECT_EQ(exponent_ideal_ratio(t.view()), 1.0);
  }
}

TEST(CompressExponent, SingleSymbolTensorHasNoBitstreams) {
  for (DType d : kDtypes) {
    Tensor t = random_bits(d, 12345, 3);
    // Same exponent (and fp16 top mantissa bits) everywhere, random sign and mantissa elsewhere.
    for (int64_t i = 0; i < t.count(); ++i) {
      uint8_t* e = t.data.data() + i * static_cast<int64_t>(dtype_size(d));
      if (d == DType::BF16) e[1] = static_cast<uint8_t>((e[1] & 0x80) | 0x3C), e[0] = static_cast<uint8_t>(e[0] | 0x80);
      if (d == DType::F16) e[1] = 0x2A;
      if (d == DType::F32) e[3] = static_cast<uint8_t>((e[3] & 0x80) | 0x3C), e[2] = static_cast<uint8_t>(e[2] | 0x80);
    }
    const auto stream = expect_round_trip(t.view(), {});
    EXPECT_EQ(stream[5], 0) << "L";
    EXPECT_EQ(stream.size(), kExponentHeaderBytes + static_cast<size_t>(t.count()) * exponent_raw_bytes(d));
  }
}

TEST(CompressExponent, TwoSymbolsTakeOneBitEach) {
  Tensor t = random_bits(DType::BF16, 1000, 4);
  for (int64_t i = 0; i < t.count(); ++i) t.data[2 * i + 1] = static_cast<uint8_t>((t.data[2 * i] & 0x80) | 0x3C);
  const auto stream = expect_round_trip(t.view(), {.chunk_elems = 1000, .streams_per_chunk = 1});
  EXPECT_EQ(stream[5], 1) << "L";
  EXPECT_EQ(stream.size(), kExponentHeaderBytes + 4 + 125 + 1000);
}

TEST(CompressExponent, StreamIsTheSameForEveryThreadCount) {
  const Tensor t = generate("gaussian", DType::BF16, 300000, 0.02, 5);
  const ExponentParams p{.chunk_elems = 10000, .streams_per_chunk = 4, .max_code_len = 11, .threads = 1};
  const auto one = compress_exponent(t.view(), p);
  for (int threads : {2, 3, 8}) {
    ExponentParams q = p;
    q.threads = threads;
    EXPECT_EQ(compress_exponent(t.view(), q), one) << threads << " threads";
    EXPECT_EQ(decompress_exponent(one, t.count(), t.dtype, threads), t.data) << threads << " threads";
  }
}

TEST(CompressExponent, GoldenRatios) {
  // Frozen from this codec and the generators (seed 1, 2^20 elements, default params); a change means
  // the format, the code construction or the generators changed.
  EXPECT_NEAR(ratio_of(generate("gaussian", DType::BF16, 1 << 20, 0.02, 1)), 1.5102, 0.002);
  EXPECT_NEAR(ratio_of(generate("gaussian", DType::F16, 1 << 20, 0.02, 1)), 1.1860, 0.002);
  EXPECT_NEAR(ratio_of(generate("gaussian", DType::F32, 1 << 20, 0.02, 1)), 1.2033, 0.002);
}

TEST(CompressExponent, RatioWithinTwoPercentOfTheEntropyBound) {
  for (DType d : kDtypes) {
    for (const char* dist : {"gaussian", "laplace", "outliers"}) {
      const Tensor t = generate(dist, d, 1 << 20, 0.02, 2);
      const double ideal = exponent_ideal_ratio(t.view());
      EXPECT_GE(ratio_of(t), 0.98 * ideal) << dist << " " << to_string(d);
      EXPECT_LE(ratio_of(t), ideal) << dist << " " << to_string(d);
    }
  }
}

// Tensors of 2^21 elements or more take their code from a sample; a symbol the sample misses makes the
// encoder start over with the exact histogram.
TEST(CompressExponent, LargeTensorsUseASampledCodeAndFallBackWhenItMissesASymbol) {
  const int64_t n = int64_t{3} << 20;
  Tensor t = generate("gaussian", DType::BF16, n, 0.02, 6);
  const ExponentParams one{.chunk_elems = 1 << 19, .streams_per_chunk = 4, .max_code_len = 11, .threads = 1};
  ExponentParams two = one;
  two.threads = 2;
  auto stream = expect_round_trip(t.view(), one);
  EXPECT_EQ(compress_exponent(t.view(), two), stream);
  EXPECT_GE(ratio_of(t, one), 0.99 * exponent_ideal_ratio(t.view()));
  EXPECT_EQ(stream[24 + 255], 0) << "no code for a symbol far from the sampled ones";

  const uint16_t inf = 0x7F80;  // exponent 255, at an element the sample skips
  std::memcpy(t.data.data() + 2 * 20000, &inf, 2);
  stream = expect_round_trip(t.view(), one);
  EXPECT_GT(stream[24 + 255], 0);
  EXPECT_EQ(compress_exponent(t.view(), two), stream);

  const Tensor zeros{"zeros", DType::BF16, {}, std::vector<uint8_t>(2 * static_cast<size_t>(n), 0)};
  stream = expect_round_trip(zeros.view(), one);
  EXPECT_EQ(stream.size(), kExponentHeaderBytes + static_cast<size_t>(n)) << "a constant tensor has no bitstreams";
}

// Outputs of 32 MiB or more are written with streaming stores from the first 64-byte line of each chunk's output
// on (ordinary stores before it, and throughout where no element starts a line): every alignment decodes alike.
TEST(CompressExponent, LargeOutputsDecodeAtEveryAlignment) {
  const int64_t n = (int64_t{16} << 20) + 3;
  std::vector<uint8_t> buf(2 * static_cast<size_t>(n) + 64);
  for (DType d : {DType::BF16, DType::F16}) {
    const Tensor t = generate("gaussian", d, n, 0.02, 8);
    const auto stream = compress_exponent(t.view(), {});
    for (size_t offset : {0, 1, 2, 34}) {
      std::fill(buf.begin(), buf.end(), uint8_t{0xA5});
      exponent_decompress(stream, MutableTensorView{buf.data() + offset, n, d}, 1 + static_cast<int>(offset % 2));
      EXPECT_TRUE(std::equal(t.data.begin(), t.data.end(), buf.begin() + static_cast<ptrdiff_t>(offset)))
          << to_string(d) << " offset " << offset;
    }
  }
}

TEST(CompressExponent, IdealRatioOfGaussianBf16IsAboutOnePointFive) {
  const Tensor t = generate("gaussian", DType::BF16, 1 << 20, 0.02, 3);
  EXPECT_NEAR(exponent_ideal_ratio(t.view()), 1.51, 0.02);
}

TEST(CompressExponent, HistogramFollowsTheSymbolDefinition) {
  const uint16_t bf16[] = {0x3F80, 0xBF80, 0x0001, 0x7FC1};  // 1, -1, subnormal, NaN
  std::array<uint64_t, 256> h;
  exponent_histogram(TensorView{reinterpret_cast<const uint8_t*>(bf16), 4, DType::BF16}, h);
  EXPECT_EQ(h[127], 2u);
  EXPECT_EQ(h[0], 1u);
  EXPECT_EQ(h[255], 1u);
  const uint16_t fp16[] = {0x3C00, 0xBC00, 0x3FFF};
  exponent_histogram(TensorView{reinterpret_cast<const uint8_t*>(fp16), 3, DType::F16}, h);
  EXPECT_EQ(h[0x3C], 1u);
  EXPECT_EQ(h[0xBC], 1u);
  EXPECT_EQ(h[0x3F], 1u);
}

TEST(CompressExponent, EntropyOfKnownHistograms) {
  std::array<uint64_t, 256> h{};
  EXPECT_EQ(entropy_bits(h), 0.0);
  h[3] = 10;
  EXPECT_EQ(entropy_bits(h), 0.0);
  h[4] = 10;
  EXPECT_DOUBLE_EQ(entropy_bits(h), 1.0);
  for (auto& c : h) c = 7;
  EXPECT_DOUBLE_EQ(entropy_bits(h), 8.0);
}

// The cost (sum of count * length) of an unrestricted Huffman code, the sum of all merged weights, and
// the depth of that code's tree.
struct Optimum { uint64_t cost = 0; int depth = 0; };
Optimum huffman_optimum(const std::array<uint64_t, 256>& h) {
  using Node = std::pair<uint64_t, int>;  // weight, subtree depth
  std::priority_queue<Node, std::vector<Node>, std::greater<>> q;
  for (uint64_t c : h)
    if (c > 0) q.push({c, 0});
  Optimum o;
  while (q.size() > 1) {
    const Node a = q.top();
    q.pop();
    const Node b = q.top();
    q.pop();
    o.cost += a.first + b.first;
    o.depth = std::max(a.second, b.second) + 1;
    q.push({a.first + b.first, o.depth});
  }
  return o;
}

// Lengths <= max_len, a code for exactly the present symbols and Kraft's sum == 1; none for fewer than two.
void expect_valid_lengths(const std::array<uint64_t, 256>& h, int max_len, const std::array<uint8_t, 256>& len) {
  const auto symbols = std::count_if(h.begin(), h.end(), [](uint64_t c) { return c > 0; });
  double kraft = 0;
  for (int s = 0; s < 256; ++s) {
    EXPECT_EQ(symbols >= 2 && h[s] > 0, len[s] > 0) << "symbol " << s;
    EXPECT_LE(len[s], max_len);
    if (len[s] > 0) kraft += std::ldexp(1.0, -len[s]);
  }
  EXPECT_EQ(kraft, symbols >= 2 ? 1.0 : 0.0);
}

TEST(CompressExponent, CodeLengthsAreLimitedCompleteAndOptimal) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 300; ++iter) {
    std::array<uint64_t, 256> h{};
    const int draws = 1 + static_cast<int>(rng() % 256);
    for (int k = 0; k < draws; ++k) {
      const int shape = iter % 3;  // flat, spread over 40 octaves, tiny counts with many ties
      h[rng() % 256] = shape == 0 ? 1 + rng() % 100 : shape == 1 ? uint64_t{1} << (rng() % 40) : 1 + rng() % 3;
    }
    for (int max_len = 8; max_len <= kExponentMaxCodeLen; ++max_len) {
      std::array<uint8_t, 256> len;
      huffman_code_lengths(h, max_len, len);
      expect_valid_lengths(h, max_len, len);
      uint64_t cost = 0;
      for (int s = 0; s < 256; ++s) cost += h[s] * len[s];
      if (std::count_if(h.begin(), h.end(), [](uint64_t c) { return c > 0; }) < 2) continue;
      const Optimum best = huffman_optimum(h);
      if (best.depth <= max_len) {
        EXPECT_EQ(cost, best.cost) << "the limit does not bind, so the code is an optimal Huffman code";
      } else {
        EXPECT_GE(cost, best.cost);
      }
    }
  }
}

TEST(CompressExponent, CodeLengthsUnderExtremeSkew) {
  std::array<uint64_t, 256> h;
  h.fill(1);
  h[17] = uint64_t{1} << 40;
  for (int max_len = 8; max_len <= kExponentMaxCodeLen; ++max_len) {
    std::array<uint8_t, 256> len;
    huffman_code_lengths(h, max_len, len);
    expect_valid_lengths(h, max_len, len);
    EXPECT_EQ(len[17], max_len == 8 ? 8 : 1) << "256 symbols under an 8-bit limit all take 8 bits";
  }
  h.fill(0);
  h[0] = UINT64_MAX / 2;  // totals beyond 2^64 are scaled, never overflow
  h[1] = UINT64_MAX / 2;
  h[2] = 1;
  std::array<uint8_t, 256> len;
  huffman_code_lengths(h, 8, len);
  expect_valid_lengths(h, 8, len);
}

TEST(CompressExponent, CodeLengthsRejectImpossibleLimits) {
  std::array<uint64_t, 256> h;
  h.fill(1);
  std::array<uint8_t, 256> len;
  EXPECT_THROW(huffman_code_lengths(h, 7, len), std::invalid_argument);
  EXPECT_THROW(huffman_code_lengths(h, 0, len), std::invalid_argument);
  EXPECT_THROW(huffman_code_lengths(h, 13, len), std::invalid_argument);
  h.fill(0);
  h[9] = 5;
  huffman_code_lengths(h, 1, len);
  EXPECT_TRUE(std::all_of(len.begin(), len.end(), [](uint8_t l) { return l == 0; }));
}

TEST(CompressExponent, CanonicalCodesMatchRfc1951Example) {
  // RFC 1951 3.2.2: lengths (3, 3, 3, 3, 3, 2, 4, 4) for A..H give 010 011 100 101 110 00 1110 1111.
  std::array<uint8_t, 256> len{};
  const uint8_t l[] = {3, 3, 3, 3, 3, 2, 4, 4};
  std::copy(std::begin(l), std::end(l), len.begin() + 'A');
  std::array<uint16_t, 256> codes;
  huffman_canonical_codes(len, codes);
  const uint16_t want[] = {0b010, 0b011, 0b100, 0b101, 0b110, 0b00, 0b1110, 0b1111};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(codes['A' + i], want[i]) << char('A' + i);
  len['Z'] = 1;  // oversubscribed
  EXPECT_THROW(huffman_canonical_codes(len, codes), std::invalid_argument);
}

TEST(CompressExponent, CodecRejectsBadParams) {
  EXPECT_THROW(make_exponent_codec({.chunk_elems = 0}), std::invalid_argument);
  EXPECT_THROW(make_exponent_codec({.streams_per_chunk = 0}), std::invalid_argument);
  EXPECT_THROW(make_exponent_codec({.streams_per_chunk = 65}), std::invalid_argument);
  EXPECT_THROW(make_exponent_codec({.max_code_len = 7}), std::invalid_argument);
  EXPECT_THROW(make_exponent_codec({.max_code_len = 13}), std::invalid_argument);
  EXPECT_THROW(make_exponent_codec({.threads = 0}), std::invalid_argument);
  EXPECT_THROW(make_exponent_codec({.chunk_elems = UINT32_MAX, .streams_per_chunk = 1}), std::invalid_argument);
}

TEST(CompressExponent, CodecInterface) {
  auto codec = make_codec({.name = "exponent", .threads = 2});
  EXPECT_EQ(codec->name(), "exponent");
  EXPECT_TRUE(codec->lossless());
  const Tensor t = generate("gaussian", DType::BF16, 5000, 0.02, 9);
  std::vector<uint8_t> out(codec->max_compressed_bytes(t.view()));
  out.resize(codec->compress(t.view(), out));
  std::vector<uint8_t> back(t.data.size());
  codec->decompress(out, MutableTensorView{back.data(), t.count(), t.dtype});
  EXPECT_EQ(back, t.data);
  std::vector<uint8_t> small(out.size() - 1);
  EXPECT_THROW(codec->compress(t.view(), small), CodecError);
}

std::string exponent_decode_error(const std::vector<uint8_t>& stream, int64_t count, DType dtype) {
  try {
    decompress_exponent(stream, count, dtype);
  } catch (const CodecError& e) {
    return e.what();
  }
  return "";
}

TEST(CompressExponent, DecoderNamesWhatIsWrong) {
  const Tensor t = generate("gaussian", DType::BF16, 3000, 0.02, 9);
  const auto good = compress_exponent(t.view(), {.chunk_elems = 1000});
  EXPECT_THAT(exponent_decode_error(good, 3000, DType::F16), HasSubstr("dtype"));
  EXPECT_THAT(exponent_decode_error(good, 2999, DType::BF16), HasSubstr("count"));
  auto bad = good;
  bad[0] ^= 1;
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("magic"));
  bad = good;
  bad[7] = 1;
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("reserved"));
  bad = good;
  bad[5] = 13;
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("max_code_len"));
  bad = good;
  bad[24 + 100] = 1;  // an extra code breaks Kraft's equality
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("Kraft"));
  bad = good;
  bad.push_back(0);
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("size"));
  bad = good;
  bad[kExponentHeaderBytes] += 1;  // first stream one byte longer: totals no longer add up
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("size"));
  bad = good;
  bad[kExponentHeaderBytes] += 1;  // move a byte from stream 0 to stream 1: stream 0 ends early
  bad[kExponentHeaderBytes + 4] -= 1;
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("chunk 0 stream"));
  bad = good;
  bad[16] = 0, bad[17] = 0, bad[18] = 0, bad[19] = 0;
  EXPECT_THAT(exponent_decode_error(bad, 3000, DType::BF16), HasSubstr("chunk_elems"));
}

// A stream with a single 1-bit code (allowed by the format; our encoder writes L = 0 instead).
TEST(CompressExponent, DecodesASingleOneBitCode) {
  const int64_t n = 20;
  std::vector<uint8_t> s(kExponentHeaderBytes + 4 + 3 + static_cast<size_t>(n), 0);
  std::memcpy(s.data(), &kExponentMagic, 4);
  s[4] = static_cast<uint8_t>(DType::F16);
  s[5] = 1;
  s[8] = static_cast<uint8_t>(n);
  s[16] = 64;  // chunk_elems
  s[20] = 1;   // one stream
  s[24 + 0x3C] = 1;
  s[kExponentHeaderBytes] = 3;  // ceil(20 / 8) bytes of zero bits
  for (int64_t i = 0; i < n; ++i) s[kExponentHeaderBytes + 7 + static_cast<size_t>(i)] = static_cast<uint8_t>(i);
  const auto back = decompress_exponent(s, n, DType::F16);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(back[2 * i], i);
    EXPECT_EQ(back[2 * i + 1], 0x3C);
  }
  s[kExponentHeaderBytes + 5] = 0x80;  // a 1 bit is no code
  EXPECT_THAT(exponent_decode_error(s, n, DType::F16), HasSubstr("single 1-bit code"));
}

TEST(CompressExponent, ParsesTheContainer) {
  const Tensor t = generate("gaussian", DType::F32, 2500, 0.02, 9);
  const auto stream = compress_exponent(t.view(), {.chunk_elems = 1000, .streams_per_chunk = 3});
  const ExponentContainer c = parse_exponent_container(stream);
  EXPECT_EQ(c.dtype, DType::F32);
  EXPECT_EQ(c.count, 2500);
  EXPECT_EQ(c.chunks, 3);
  ASSERT_EQ(c.stream_begin.size(), 10u);
  EXPECT_EQ(c.stream_begin[0], kExponentHeaderBytes + 9 * 4);
  EXPECT_EQ(c.raw_begin, c.stream_begin[9]);
  EXPECT_EQ(stream.size(), c.raw_begin + 2500 * 3);
  EXPECT_EQ(c.max_code_len, *std::max_element(c.code_len.begin(), c.code_len.end()));
}

}  // namespace
}  // namespace mlsb::compress
