// CUDA codecs against the CPU codecs (the oracle): round trips, GPU streams decoded by the CPU and CPU
// streams decoded by the GPU, lossy GPU streams equal to CPU streams byte for byte, and a 1 GiB timing.
// Every test skips (with the reason) where no CUDA device is present.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "workloads/compress/codec.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/gpu_codecs.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

#define SKIP_WITHOUT_GPU()                                      \
  do {                                                          \
    std::string why;                                            \
    if (!gpu::available(&why)) GTEST_SKIP() << "no GPU: " << why; \
  } while (0)

const char* const kGpuCodecs[] = {"exponent", "cast-bf16", "cast-fp16", "int8-block", "fp8-e4m3", "fp8-e5m2"};
const DType kDtypes[] = {DType::BF16, DType::F16, DType::F32};
const int64_t kCounts[] = {0, 1, 3, 127, 1000, 16383, 16385, 100003};

CodecConfig config(const std::string& name, int64_t block = 128) {
  CodecConfig c;
  c.name = name;
  c.block = block;
  return c;
}

std::vector<uint8_t> cpu_compress(const CodecConfig& c, const Tensor& t) {
  auto codec = make_codec(c);
  std::vector<uint8_t> out(codec->max_compressed_bytes(t.view()));
  out.resize(codec->compress(t.view(), out));
  return out;
}

std::vector<uint8_t> cpu_decode(const CodecConfig& c, const std::vector<uint8_t>& stream, const Tensor& like) {
  Tensor out = like;
  make_codec(c)->decompress(stream, out.mutable_view());
  return out.data;
}

TEST(GpuCodecs, RoundTripsMatchTheCpuCodecs) {
  SKIP_WITHOUT_GPU();
  for (const char* name : kGpuCodecs)
    for (DType dt : kDtypes)
      for (const char* dist : {"pathological", "gaussian"})
        for (int64_t n : kCounts) {
          SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dt)) + " " + dist + " n=" + std::to_string(n));
          const Tensor t = generate(dist, dt, n, 0.02, 7 + static_cast<uint64_t>(n));
          const CodecConfig c = config(name);
          const gpu::RoundTrip rt = gpu::round_trip(c, t.view());
          // The CPU decodes the GPU's stream to exactly what the GPU decoded.
          EXPECT_EQ(cpu_decode(c, rt.stream, t), rt.decoded);
          if (is_lossless(name)) {
            EXPECT_EQ(rt.decoded, t.data);
          } else {
            EXPECT_EQ(rt.stream, cpu_compress(c, t));  // same rounding, byte for byte
          }
        }
}

TEST(GpuCodecs, BlockSizesOfTheBlockQuantisers) {
  SKIP_WITHOUT_GPU();
  for (const char* name : {"int8-block", "fp8-e4m3", "fp8-e5m2"})
    for (int64_t block : {1, 3, 4, 32, 64, 100, 128, 256, 4096})
      for (DType dt : kDtypes) {
        SCOPED_TRACE(std::string(name) + " block=" + std::to_string(block) + " " + std::string(to_string(dt)));
        const Tensor t = generate("pathological", dt, 10007, 0.02, 3);
        const CodecConfig c = config(name, block);
        const gpu::RoundTrip rt = gpu::round_trip(c, t.view());
        EXPECT_EQ(rt.stream, cpu_compress(c, t));
        EXPECT_EQ(rt.decoded, cpu_decode(c, rt.stream, t));
      }
}

TEST(GpuCodecs, GpuDecodesCpuStreams) {
  SKIP_WITHOUT_GPU();
  for (const char* name : kGpuCodecs)
    for (DType dt : kDtypes)
      for (int64_t n : {int64_t{0}, int64_t{5}, int64_t{300001}}) {
        SCOPED_TRACE(std::string(name) + " " + std::string(to_string(dt)) + " n=" + std::to_string(n));
        const Tensor t = generate("pathological", dt, n, 0.02, 11);
        const CodecConfig c = config(name);
        const std::vector<uint8_t> stream = cpu_compress(c, t);  // exponent: 1 Mi-element chunks, 4 streams
        EXPECT_EQ(gpu::decode(c, stream, n, dt), cpu_decode(c, stream, t));
      }
}

TEST(GpuCodecs, GpuExponentStreamEqualsCpuStreamWithTheGpuLayout) {
  SKIP_WITHOUT_GPU();
  ExponentParams p;
  p.chunk_elems = 16384;
  p.streams_per_chunk = 16;
  for (DType dt : kDtypes)
    for (int64_t n : {int64_t{1}, int64_t{16385}, int64_t{200000}}) {
      const Tensor t = generate("gaussian", dt, n, 0.02, 5);
      std::vector<uint8_t> cpu(exponent_max_compressed_bytes(t.view(), p));
      cpu.resize(exponent_compress(t.view(), p, cpu));
      EXPECT_EQ(gpu::round_trip(config("exponent"), t.view()).stream, cpu) << to_string(dt) << " n=" << n;
    }
}

TEST(GpuCodecs, CorruptStreamsAreCodecErrors) {
  SKIP_WITHOUT_GPU();
  const Tensor t = generate("gaussian", DType::BF16, 50000, 0.02, 9);
  const CodecConfig c = config("exponent");
  std::vector<uint8_t> s = gpu::round_trip(c, t.view()).stream;
  std::vector<uint8_t> bad = s;
  bad.pop_back();
  EXPECT_THROW(gpu::decode(c, bad, t.count(), t.dtype), CodecError);
  EXPECT_THROW(gpu::decode(c, s, t.count() + 1, t.dtype), CodecError);
  EXPECT_THROW(gpu::decode(c, s, t.count(), DType::F16), CodecError);
  // Flip bits inside the bitstreams: the decoder reports or decodes something, never crashes.
  const size_t bits = kExponentHeaderBytes + 4 * 64;
  for (size_t i = bits; i < bits + 64 && i < s.size(); ++i) {
    std::vector<uint8_t> flip = s;
    flip[i] ^= 0x5A;
    try {
      (void)gpu::decode(c, flip, t.count(), t.dtype);
    } catch (const CodecError&) {
    }
  }
}

TEST(GpuCodecs, OneGibBf16Timing) {
  SKIP_WITHOUT_GPU();
  const int64_t n = int64_t{1} << 29;  // 1 GiB of bf16
  const Tensor t = generate("gaussian", DType::BF16, n, 0.02, 1);
  const double gb = static_cast<double>(t.data.size()) / 1e9;
  for (const char* name : {"exponent", "int8-block", "cast-fp16"}) {
    const CodecConfig c = config(name);
    gpu::round_trip(c, t.view());  // warm-up
    const gpu::RoundTrip rt = gpu::round_trip(c, t.view());
    if (is_lossless(name)) {
      EXPECT_EQ(rt.decoded, t.data);
    }
    EXPECT_GT(rt.compress_ms, 0);
    EXPECT_GT(rt.decompress_ms, 0);
    EXPECT_GE(rt.compress_host_ms, 0);
    std::printf("[gpu 1 GiB bf16] %-10s ratio %.4f  compress %.3f ms (%.1f GB/s) + host %.3f ms  decompress %.3f ms "
                "(%.1f GB/s) + host %.3f ms\n",
                name, static_cast<double>(t.data.size()) / static_cast<double>(rt.stream.size()), rt.compress_ms,
                gb / (rt.compress_ms / 1e3), rt.compress_host_ms, rt.decompress_ms, gb / (rt.decompress_ms / 1e3),
                rt.decompress_host_ms);
  }
}

}  // namespace
}  // namespace mlsb::compress

#undef SKIP_WITHOUT_GPU  // each GPU test file has its own; a unity build joins them
