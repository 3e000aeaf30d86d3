// Corrupt streams for every lossless decoder: each mutated stream must decode or throw CodecError, never
// crash, hang or touch memory outside its spans (this file runs under ASan/UBSan in the asan preset).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "workloads/compress/baselines.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

struct Case {
  std::string label;
  std::unique_ptr<Codec> codec;
  Tensor tensor;
  std::vector<uint8_t> stream;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  auto add = [&](std::string label, std::unique_ptr<Codec> codec, Tensor t) {
    std::vector<uint8_t> s(codec->max_compressed_bytes(t.view()));
    s.resize(codec->compress(t.view(), s));
    v.push_back({std::move(label), std::move(codec), std::move(t), std::move(s)});
  };
  add("exponent bf16", make_exponent_codec({.chunk_elems = 700, .streams_per_chunk = 3}),
      generate("pathological", DType::BF16, 2000, 0.02, 1));
  add("exponent fp16 one stream", make_exponent_codec({.chunk_elems = 5000, .streams_per_chunk = 1, .max_code_len = 8}),
      generate("gaussian", DType::F16, 1500, 0.02, 2));
  add("exponent fp32 threads", make_exponent_codec({.chunk_elems = 100, .streams_per_chunk = 5, .threads = 2}),
      generate("laplace", DType::F32, 600, 0.02, 3));
  add("exponent constant", make_exponent_codec({}), Tensor{"zeros", DType::BF16, {}, std::vector<uint8_t>(400, 0)});
  add("none", make_none_codec(), generate("gaussian", DType::BF16, 300, 0.02, 4));
  add("zstd", make_zstd_codec(1, 1), generate("gaussian", DType::BF16, 2000, 0.02, 5));
  add("zstd frames", make_zstd_codec(3, 3), generate("gaussian", DType::F32, 300000, 0.02, 6));
  add("lz4", make_lz4_codec(2), generate("outliers", DType::F16, 2000, 0.02, 7));
  return v;
}

// Decodes `stream` into a tensor shaped like the case's; false when it threw CodecError.
bool decodes(Case& c, const std::vector<uint8_t>& stream) {
  std::vector<uint8_t> out(c.tensor.data.size());
  try {
    c.codec->decompress(stream, MutableTensorView{out.data(), c.tensor.count(), c.tensor.dtype});
    return true;
  } catch (const CodecError&) {
    return false;
  }
}

TEST(CompressDecoderFuzz, ValidStreamsRoundTrip) {
  for (auto& c : cases()) {
    std::vector<uint8_t> out(c.tensor.data.size());
    c.codec->decompress(c.stream, MutableTensorView{out.data(), c.tensor.count(), c.tensor.dtype});
    EXPECT_EQ(out, c.tensor.data) << c.label;
  }
}

TEST(CompressDecoderFuzz, BitFlips) {
  std::mt19937_64 rng(99);
  for (auto& c : cases()) {
    const int rounds = c.stream.size() > 100000 ? 100 : 1500;
    for (int i = 0; i < rounds; ++i) {
      auto s = c.stream;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        // Half the flips land in the first 400 bytes, where the headers and tables are.
        const size_t at = rng() % 2 ? rng() % std::min<size_t>(s.size(), 400) : rng() % s.size();
        s[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      }
      decodes(c, s);
    }
  }
}

TEST(CompressDecoderFuzz, EveryTruncationIsAnError) {
  for (auto& c : cases()) {
    if (c.stream.size() > 100000) continue;
    for (size_t len = 0; len < c.stream.size(); ++len)
      EXPECT_FALSE(decodes(c, std::vector<uint8_t>(c.stream.begin(), c.stream.begin() + static_cast<ptrdiff_t>(len))))
          << c.label << " truncated to " << len;
  }
}

TEST(CompressDecoderFuzz, RandomBytesAndRandomBodies) {
  std::mt19937_64 rng(5);
  for (auto& c : cases()) {
    const int rounds = c.stream.size() > 100000 ? 10 : 300;
    for (int i = 0; i < rounds; ++i) {
      std::vector<uint8_t> s(rng() % 1200);
      for (auto& b : s) b = static_cast<uint8_t>(rng());
      decodes(c, s);
      // A valid header (the first 16 bytes for baselines, 280 + table for exponent) over random bytes.
      auto t = c.stream;
      for (size_t k = std::min<size_t>(t.size(), 300); k < t.size(); ++k) t[k] = static_cast<uint8_t>(rng());
      decodes(c, t);
    }
  }
}

void put32(std::vector<uint8_t>& s, size_t at, uint32_t v) { std::memcpy(s.data() + at, &v, 4); }
void put64(std::vector<uint8_t>& s, size_t at, uint64_t v) { std::memcpy(s.data() + at, &v, 8); }

TEST(CompressDecoderFuzz, HeaderFieldsAtExtremes) {
  const uint64_t counts[] = {0, 1, 1999, 2001, uint64_t{1} << 31, uint64_t{1} << 62, UINT64_MAX};
  for (auto& c : cases()) {
    const bool exponent = c.label.rfind("exponent", 0) == 0;
    for (uint64_t count : counts) {
      auto s = c.stream;
      put64(s, 8, count);
      decodes(c, s);
    }
    if (!exponent) continue;
    for (uint32_t chunk : {0u, 1u, 2u, 699u, 701u, UINT32_MAX}) {
      auto s = c.stream;
      put32(s, 16, chunk);
      decodes(c, s);
    }
    for (uint32_t streams : {0u, 1u, 2u, 64u, 65u, UINT32_MAX}) {
      auto s = c.stream;
      put32(s, 20, streams);
      decodes(c, s);
    }
    for (uint8_t L : {0, 1, 11, 12, 13, 255}) {
      auto s = c.stream;
      s[5] = L;
      decodes(c, s);
    }
    for (uint8_t len : {0, 1, 2, 12, 13, 255}) {
      for (int sym : {0, 1, 127, 255}) {
        auto s = c.stream;
        s[24 + sym] = len;
        decodes(c, s);
      }
    }
    // Stream table entries: extremes, and bytes moved between neighbours (the total stays right).
    const ExponentContainer parsed = parse_exponent_container(c.stream);
    const size_t entries = parsed.stream_begin.empty() ? 0 : parsed.stream_begin.size() - 1;
    for (size_t e = 0; e < entries; ++e) {
      for (uint32_t v : {0u, 1u, 0x7FFFFFFFu, UINT32_MAX}) {
        auto s = c.stream;
        put32(s, kExponentHeaderBytes + 4 * e, v);
        decodes(c, s);
      }
      if (e + 1 < entries) {
        for (int delta : {-3, -1, 1, 3}) {
          auto s = c.stream;
          uint32_t a, b;
          std::memcpy(&a, s.data() + kExponentHeaderBytes + 4 * e, 4);
          std::memcpy(&b, s.data() + kExponentHeaderBytes + 4 * e + 4, 4);
          put32(s, kExponentHeaderBytes + 4 * e, a + static_cast<uint32_t>(delta));
          put32(s, kExponentHeaderBytes + 4 * e + 4, b - static_cast<uint32_t>(delta));
          decodes(c, s);
        }
      }
    }
  }
}

}  // namespace
}  // namespace mlsb::compress
