// The per-element arithmetic of the CUDA codecs (workloads/compress/cuda/codec_math.hpp), compiled for
// the host, against the CPU codecs: conversions bit for bit, lossy streams built the kernels' way equal
// the CPU streams byte for byte, exponent streams built in the GPU layout equal the CPU encoder's with
// the same layout, and the GPU's table-driven bit reader decodes CPU streams. This is what can be
// checked of the GPU path on a machine without a GPU; tests/gpu/ runs the kernels themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "workloads/compress/codec.hpp"
#include "workloads/compress/cuda/codec_math.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/inputs.hpp"
#include "workloads/compress/quant_math.hpp"
#include "workloads/compress/quantize.hpp"

namespace mlsb::compress {
namespace {

namespace m = gpu::math;

uint32_t math_bits_of(float f) { return m::f2u(f); }

std::vector<uint32_t> sample_floats() {
  std::vector<uint32_t> v = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u,
                             0x7F800001u, 0x7FA00000u, 0x00000001u, 0x807FFFFFu, 0x477FF000u, 0x477FEFFFu,
                             0x43E00000u, 0x43E7FFFFu, 0x47600000u, 0x3F808000u, 0x3F818000u, 0x33000000u};
  std::mt19937 rng(42);
  for (int i = 0; i < 400000; ++i) v.push_back(rng());
  for (int i = 0; i < 200000; ++i) v.push_back(math_bits_of(std::normal_distribution<float>(0, 100)(rng)));
  return v;
}

TEST(CompressGpuMath, ConversionsMatchTheCpu) {
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(math_bits_of(m::fp16_to_f32(static_cast<uint16_t>(h))), math_bits_of(fp16_to_float(static_cast<uint16_t>(h)))) << h;
    ASSERT_EQ(math_bits_of(m::bf16_to_f32(static_cast<uint16_t>(h))), math_bits_of(bf16_to_float(static_cast<uint16_t>(h)))) << h;
  }
  for (uint32_t x : sample_floats()) {
    const float f = m::u2f(x);
    ASSERT_EQ(m::f32_to_bf16(f), float_to_bf16(f)) << std::hex << x;
    ASSERT_EQ(m::f32_to_fp16(f), float_to_fp16(f)) << std::hex << x;
    ASSERT_EQ(m::f32_to_e4m3(f), float_to_e4m3(f)) << std::hex << x;
    ASSERT_EQ(m::f32_to_e5m2(f), float_to_e5m2(f)) << std::hex << x;
  }
  for (int q = 0; q < 256; ++q) {
    EXPECT_EQ(math_bits_of(m::fp8_to_f32<3, 7>(static_cast<uint8_t>(q))), math_bits_of(e4m3_to_float(static_cast<uint8_t>(q)))) << q;
    EXPECT_EQ(math_bits_of(m::fp8_to_f32<2, 15>(static_cast<uint8_t>(q))), math_bits_of(e5m2_to_float(static_cast<uint8_t>(q)))) << q;
  }
}

float load(const Tensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::F32: return m::load_elem<0>(t.data.data(), i);
    case DType::F16: return m::load_elem<1>(t.data.data(), i);
    default: return m::load_elem<2>(t.data.data(), i);
  }
}

void store(std::vector<uint8_t>& out, DType dt, int64_t i, float f) {
  switch (dt) {
    case DType::F32: m::store_elem<0>(out.data(), i, f); break;
    case DType::F16: m::store_elem<1>(out.data(), i, f); break;
    default: m::store_elem<2>(out.data(), i, f); break;
  }
}

template <typename T>
void append(std::vector<uint8_t>& s, T v) {
  const size_t at = s.size();
  s.resize(at + sizeof v);
  std::memcpy(s.data() + at, &v, sizeof v);
}

template <int KIND>
void encode_blocks(const Tensor& t, uint32_t block, std::vector<uint8_t>& s) {
  const int64_t n = t.count(), blocks = (n + block - 1) / block;
  std::vector<uint8_t> codes(static_cast<size_t>(n));
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t begin = b * block, end = std::min<int64_t>(n, begin + block);
    uint32_t mx = 0;
    for (int64_t i = begin; i < end; ++i) mx = std::max(mx, quant::finite_abs_bits(load(t, i)));
    const float scale = quant::block_scale<KIND>(m::u2f(mx));
    append(s, scale);
    for (int64_t i = begin; i < end; ++i) codes[i] = quant::encode<KIND>(load(t, i), scale);
  }
  s.insert(s.end(), codes.begin(), codes.end());
}

/// A lossy stream built element by element the way quantize.cu's kernels compute it.
std::vector<uint8_t> emulate_quant(QuantKind kind, const Tensor& t, uint32_t block) {
  std::vector<uint8_t> s;
  append(s, kQuantMagic);
  append(s, static_cast<uint8_t>(kind));
  append(s, static_cast<uint8_t>(t.dtype));
  append(s, uint16_t{0});
  append(s, static_cast<uint64_t>(t.count()));
  const int64_t n = t.count();
  switch (kind) {
    case QuantKind::CastBf16:
      for (int64_t i = 0; i < n; ++i) append(s, m::f32_to_bf16(load(t, i)));
      break;
    case QuantKind::CastFp16: {
      uint32_t mx = 0;
      for (int64_t i = 0; i < n; ++i) mx = std::max(mx, quant::finite_abs_bits(load(t, i)));
      const int32_t k = quant::fp16_scale_exponent(m::u2f(mx));
      append(s, k);
      for (int64_t i = 0; i < n; ++i) append(s, m::f32_to_fp16(m::ldexp_like_host(load(t, i), k)));
      break;
    }
    case QuantKind::Int8Block: append(s, block), encode_blocks<3>(t, block, s); break;
    case QuantKind::Fp8E4M3: append(s, block), encode_blocks<4>(t, block, s); break;
    case QuantKind::Fp8E5M2: append(s, block), encode_blocks<5>(t, block, s); break;
  }
  return s;
}

/// The decode of quantize.cu's decode kernel, element by element.
std::vector<uint8_t> emulate_dequant(QuantKind kind, const std::vector<uint8_t>& s, const Tensor& t, uint32_t block) {
  std::vector<uint8_t> out(t.data.size());
  const int64_t n = t.count();
  const uint8_t* p = s.data() + kQuantHeaderBytes;
  if (kind == QuantKind::CastBf16 || kind == QuantKind::CastFp16) {
    int32_t k = 0;
    if (kind == QuantKind::CastFp16) std::memcpy(&k, p, 4), p += 4;
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      store(out, t.dtype, i, kind == QuantKind::CastBf16 ? m::bf16_to_f32(h) : m::ldexp_like_host(m::fp16_to_f32(h), -k));
    }
    return out;
  }
  const int64_t blocks = (n + block - 1) / block;
  const uint8_t* codes = p + 4 + 4 * blocks;
  for (int64_t i = 0; i < n; ++i) {
    float scale;
    std::memcpy(&scale, p + 4 + 4 * (i / block), 4);
    const float v = kind == QuantKind::Int8Block ? quant::decode<3>(codes[i], scale)
                    : kind == QuantKind::Fp8E4M3 ? quant::decode<4>(codes[i], scale)
                                                 : quant::decode<5>(codes[i], scale);
    store(out, t.dtype, i, v);
  }
  return out;
}

TEST(CompressGpuMath, LossyStreamsEqualTheCpuStreams) {
  const std::pair<const char*, QuantKind> kinds[] = {{"cast-bf16", QuantKind::CastBf16},
                                                     {"cast-fp16", QuantKind::CastFp16},
                                                     {"int8-block", QuantKind::Int8Block},
                                                     {"fp8-e4m3", QuantKind::Fp8E4M3},
                                                     {"fp8-e5m2", QuantKind::Fp8E5M2}};
  for (const auto& [name, kind] : kinds)
    for (DType dt : {DType::BF16, DType::F16, DType::F32})
      for (const char* dist : {"pathological", "gaussian", "outliers"})
        for (int64_t block : {1, 3, 32, 128, 1000}) {
          SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dt)) + " " + dist + " block " + std::to_string(block));
          const Tensor t = generate(dist, dt, 4099, 0.02, 17);
          CodecConfig c;
          c.name = name;
          c.block = block;
          auto codec = make_codec(c);
          std::vector<uint8_t> cpu(codec->max_compressed_bytes(t.view()));
          cpu.resize(codec->compress(t.view(), cpu));
          const std::vector<uint8_t> gpu = emulate_quant(kind, t, static_cast<uint32_t>(block));
          ASSERT_EQ(gpu.size(), cpu.size());
          const auto diff = std::mismatch(gpu.begin(), gpu.end(), cpu.begin());
          ASSERT_TRUE(diff.first == gpu.end()) << "first difference at byte " << (diff.first - gpu.begin()) << ": "
                                               << int(*diff.first) << " vs " << int(*diff.second);
          Tensor decoded = t;
          codec->decompress(cpu, decoded.mutable_view());
          ASSERT_EQ(emulate_dequant(kind, cpu, t, static_cast<uint32_t>(block)), decoded.data);
          if (kind == QuantKind::CastBf16 || kind == QuantKind::CastFp16) break;  // block is unused
        }
}

TEST(CompressGpuMath, CanonicalCodesMatchTheCpu) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    std::array<uint64_t, 256> hist{};
    const int symbols = 2 + trial * 5;
    for (int s = 0; s < symbols; ++s) hist[(s * 37 + trial) % 256] = 1 + rng() % (trial % 2 ? 1000000 : 10);
    std::array<uint8_t, 256> len{};
    huffman_code_lengths(hist, 11, len);
    std::array<uint16_t, 256> cpu{}, gpu{};
    huffman_canonical_codes(len, cpu);
    m::canonical_codes(len.data(), gpu.data());
    ASSERT_EQ(gpu, cpu) << trial;
  }
}

template <int DT>
uint32_t elem_bits(const Tensor& t, int64_t i) {
  typename m::ExpTraits<DT>::Bits x;
  std::memcpy(&x, t.data.data() + i * sizeof x, sizeof x);
  return x;
}

/// The exponent stream of the GPU encoder (16384-element chunks of 16 streams), built serially.
template <int DT>
std::vector<uint8_t> emulate_exponent(const Tensor& t) {
  using T = m::ExpTraits<DT>;
  const int64_t n = t.count();
  std::array<uint64_t, 256> hist{};
  for (int64_t i = 0; i < n; ++i) ++hist[T::symbol(elem_bits<DT>(t, i))];
  std::array<uint8_t, 256> len{};
  huffman_code_lengths(hist, ExponentParams{}.max_code_len, len);
  const int L = *std::max_element(len.begin(), len.end());
  uint8_t sole = 0;
  if (L == 0)
    for (int s = 0; s < 256; ++s)
      if (hist[s]) {
        sole = static_cast<uint8_t>(s);
        break;
      }
  std::vector<uint8_t> s;
  append(s, kExponentMagic);
  s.push_back(static_cast<uint8_t>(t.dtype));
  s.push_back(static_cast<uint8_t>(L));
  s.push_back(sole);
  s.push_back(0);
  append(s, static_cast<uint64_t>(n));
  append(s, uint32_t{16384});
  append(s, uint32_t{16});
  s.insert(s.end(), len.begin(), len.end());
  if (L > 0) {
    uint16_t codes[256];
    m::canonical_codes(len.data(), codes);
    std::vector<uint32_t> sizes;
    std::vector<uint8_t> streams;
    for (int64_t base = 0; base < n; base += 16384) {
      const int64_t cn = std::min<int64_t>(16384, n - base), q = (cn + 15) / 16;
      for (int st = 0; st < 16; ++st) {
        const int64_t b = std::min(cn, st * q), e = std::min(cn, b + q);
        std::vector<uint8_t> out;
        uint64_t acc = 0;
        int nb = 0;
        for (int64_t j = b; j < e; ++j) {
          const uint32_t sym = T::symbol(elem_bits<DT>(t, base + j));
          acc = acc << len[sym] | codes[sym];
          nb += len[sym];
          while (nb >= 8) out.push_back(static_cast<uint8_t>(acc >> (nb - 8))), nb -= 8;
        }
        if (nb) out.push_back(static_cast<uint8_t>(acc << (8 - nb)));
        sizes.push_back(static_cast<uint32_t>(out.size()));
        streams.insert(streams.end(), out.begin(), out.end());
      }
    }
    for (uint32_t z : sizes) append(s, z);
    s.insert(s.end(), streams.begin(), streams.end());
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t r = T::raw(elem_bits<DT>(t, i));
    for (int b = 0; b < T::raw_bytes; ++b) s.push_back(static_cast<uint8_t>(r >> (8 * b)));
  }
  return s;
}

/// Decodes with the GPU decoder's reader and table, window by window as the kernel does.
template <int DT>
std::vector<uint8_t> emulate_exponent_decode(const std::vector<uint8_t>& s) {
  using T = m::ExpTraits<DT>;
  const ExponentContainer c = parse_exponent_container(s);
  std::vector<uint8_t> out(static_cast<size_t>(c.count) * sizeof(typename T::Bits));
  std::vector<uint16_t> table(size_t{1} << c.max_code_len);
  if (c.max_code_len) m::build_decode_table(c.code_len.data(), c.max_code_len, table.data());
  const uint32_t S = c.streams_per_chunk, window = 16384 / S;
  std::vector<uint8_t> stage(16384);
  for (int64_t ch = 0; ch < c.chunks; ++ch) {
    const int64_t base = ch * c.chunk_elems, n = std::min<int64_t>(c.chunk_elems, c.count - base), q = (n + S - 1) / S;
    for (uint32_t st = 0; st < S; ++st) {
      const int64_t first = std::min<int64_t>(n, st * q), cnt = std::min<int64_t>(n, first + q) - first;
      std::vector<uint8_t> syms(static_cast<size_t>(cnt), c.sole_symbol);
      if (c.max_code_len) {
        const size_t i = static_cast<size_t>(ch) * S + st;
        m::BitReader rd{};
        rd.init(s.data() + c.stream_begin[i], s.data() + c.stream_begin[i + 1]);
        for (int64_t w0 = 0; w0 < cnt; w0 += window)
          EXPECT_EQ(rd.decode(table.data(), c.max_code_len, syms.data() + w0, std::min<int64_t>(window, cnt - w0)), 0);
        EXPECT_EQ(rd.finish(), 0);
      }
      for (int64_t j = 0; j < cnt; ++j) {
        const int64_t e = base + first + j;
        uint32_t r = 0;
        for (int b = 0; b < T::raw_bytes; ++b) r |= static_cast<uint32_t>(s[c.raw_begin + e * T::raw_bytes + b]) << (8 * b);
        const auto x = static_cast<typename T::Bits>(T::join(syms[j], r));
        std::memcpy(out.data() + e * sizeof x, &x, sizeof x);
      }
    }
  }
  return out;
}

template <int DT>
void check_exponent(DType dt) {
  ExponentParams gpu_layout;
  gpu_layout.chunk_elems = 16384;
  gpu_layout.streams_per_chunk = 16;
  for (const char* dist : {"pathological", "gaussian"})
    for (int64_t n : {0, 1, 1000, 16384, 40000}) {
      SCOPED_TRACE(std::string(to_string(dt)) + " " + dist + " n=" + std::to_string(n));
      const Tensor t = generate(dist, dt, n, 0.02, 23);
      std::vector<uint8_t> cpu(exponent_max_compressed_bytes(t.view(), gpu_layout));
      cpu.resize(exponent_compress(t.view(), gpu_layout, cpu));
      EXPECT_EQ(emulate_exponent<DT>(t), cpu);
      EXPECT_EQ(emulate_exponent_decode<DT>(cpu), t.data);
      std::vector<uint8_t> big(exponent_max_compressed_bytes(t.view(), ExponentParams{}));  // CPU layout
      big.resize(exponent_compress(t.view(), ExponentParams{}, big));
      EXPECT_EQ(emulate_exponent_decode<DT>(big), t.data);
    }
}

TEST(CompressGpuMath, ExponentGpuLayoutEqualsTheCpuStream) {
  check_exponent<0>(DType::F32);
  check_exponent<1>(DType::F16);
  check_exponent<2>(DType::BF16);
}

TEST(CompressGpuMath, StreamSpansTileAChunkOfUpTo2To32Elements) {
  // The decoder's per-stream spans, 64-bit: with 32-bit arithmetic first + q wraps past 2^32 and the last
  // stream of a chunk of 2^32 - 1 elements gets a length near 2^32.
  for (const uint32_t n : {0u, 1u, 1000u, 4294967295u, 4294967290u})
    for (const uint32_t streams : {1u, 2u, 3u, 16u, 32u}) {
      const uint32_t q = n / streams + (n % streams != 0);
      uint64_t next = 0;
      for (uint32_t s = 0; s < streams; ++s) {
        const gpu::math::StreamSpan span = gpu::math::stream_span(n, q, s);
        ASSERT_EQ(span.first, next) << "n " << n << " streams " << streams << " stream " << s;
        ASSERT_LE(span.len, q);
        next = span.first + span.len;
      }
      EXPECT_EQ(next, n) << "n " << n << " streams " << streams;
    }
}

TEST(CompressGpuMath, BitReaderRejectsCorruptStreams) {
  const uint8_t len[256] = {1, 1};  // symbol 0 = "0", symbol 1 = "1"
  std::vector<uint16_t> table(2);
  m::build_decode_table(len, 1, table.data());
  uint8_t out[16];
  const uint8_t one = 0xA0;  // 1 0 1 then zero padding
  m::BitReader rd{};
  rd.init(&one, &one + 1);
  EXPECT_EQ(rd.decode(table.data(), 1, out, 3), m::kDecodeOk);
  EXPECT_EQ(rd.finish(), m::kDecodeOk);
  rd.init(&one, &one + 1);
  EXPECT_EQ(rd.decode(table.data(), 1, out, 9), m::kDecodeOverrun);
  rd.init(&one, &one + 1);
  EXPECT_EQ(rd.decode(table.data(), 1, out, 1), m::kDecodeOk);
  EXPECT_EQ(rd.finish(), m::kDecodePadding);  // bits "01" left, not zero
  const uint8_t two[2] = {0x00, 0x00};
  rd.init(two, two + 2);
  EXPECT_EQ(rd.decode(table.data(), 1, out, 3), m::kDecodeOk);
  EXPECT_EQ(rd.finish(), m::kDecodeTrailing);
  uint8_t single[256] = {};  // one symbol of length 1: prefix "1" has no code
  single[2] = 1;
  m::build_decode_table(single, 1, table.data());
  const uint8_t ff = 0xFF;
  rd.init(&ff, &ff + 1);
  EXPECT_EQ(rd.decode(table.data(), 1, out, 1), m::kDecodeBadCode);
}

}  // namespace
}  // namespace mlsb::compress
