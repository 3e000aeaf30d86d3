// Baseline lossless codecs: `none` (memcpy), `zstd` (libzstd) and `lz4` (liblz4) behind the 16-byte
// header of baselines.hpp. Bodies after the header:
//   none: the tensor's bytes.
//   zstd: zstd frames, concatenated; one frame of the whole tensor with one thread, frames of
//         kChunkBytes of input each with more (each frame records its content size).
//   lz4:  blocks of kChunkBytes of input (the last one shorter), each a u32 (LE) compressed size and an
//         LZ4 block; the same bytes for every thread count.
// With more than one thread, chunks are compressed at reserved places (their worst-case bound) in
// parallel and then packed; decoders locate every frame or block first, then decode them in parallel.
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "util/parallel.hpp"
#include "workloads/compress/baselines.hpp"

namespace mlsb::compress {
namespace {

constexpr uint32_t kMagic = 0x314C424D;  // "MBL1"
constexpr size_t kHeaderBytes = 16;
constexpr size_t kChunkBytes = size_t{1} << 20;
enum class Kind : uint8_t { None = 0, Zstd = 1, Lz4 = 2 };

const char* baseline_name(Kind k) { return k == Kind::None ? "none" : k == Kind::Zstd ? "zstd" : "lz4"; }

[[noreturn]] void fail_baseline(Kind k, const std::string& what) { throw CodecError(std::string(baseline_name(k)) + ": " + what); }

void write_baseline_header(Kind k, TensorView in, std::span<uint8_t> out) {
  if (out.size() < kHeaderBytes) fail_baseline(k, "output buffer of " + std::to_string(out.size()) + " bytes is too small");
  std::memset(out.data(), 0, kHeaderBytes);
  std::memcpy(out.data(), &kMagic, 4);
  out[4] = static_cast<uint8_t>(k);
  out[5] = static_cast<uint8_t>(in.dtype);
  const auto count = static_cast<uint64_t>(in.count);
  std::memcpy(out.data() + 8, &count, 8);
}

// Checks the header against the codec and the output tensor; returns the body.
std::span<const uint8_t> check_header(Kind k, std::span<const uint8_t> in, MutableTensorView out) {
  if (in.size() < kHeaderBytes)
    fail_baseline(k, "stream of " + std::to_string(in.size()) + " bytes is shorter than the 16-byte header");
  uint32_t magic;
  uint16_t reserved;
  uint64_t count;
  std::memcpy(&magic, in.data(), 4);
  std::memcpy(&reserved, in.data() + 6, 2);
  std::memcpy(&count, in.data() + 8, 8);
  if (magic != kMagic) fail_baseline(k, "bad magic (not an MBL1 stream)");
  if (in[4] != static_cast<uint8_t>(k))
    fail_baseline(k, "codec: the stream was written by codec " + std::to_string(in[4]) + ", not " + baseline_name(k));
  if (in[5] != static_cast<uint8_t>(out.dtype))
    fail_baseline(k, "dtype: the stream holds dtype " + std::to_string(in[5]) + ", the output is " +
                std::string(to_string(out.dtype)));
  if (reserved != 0) fail_baseline(k, "reserved header bytes are not 0");
  if (count != static_cast<uint64_t>(out.count))
    fail_baseline(k, "count: the stream holds " + std::to_string(count) + " elements, the output has " +
                std::to_string(out.count));
  return in.subspan(kHeaderBytes);
}

size_t chunks_of(size_t bytes) { return (bytes + kChunkBytes - 1) / kChunkBytes; }
size_t chunk_size(size_t bytes, size_t i) { return std::min(kChunkBytes, bytes - i * kChunkBytes); }

// Compresses the chunks of `src` with `one(chunk, size, dst, capacity, worker) -> bytes` into `dst`
// back to back; `bound(size)` is the most one chunk can take. Returns the bytes written.
size_t compress_chunks(const uint8_t* src, size_t bytes, uint8_t* dst, int threads,
                       const std::function<size_t(size_t)>& bound,
                       const std::function<size_t(const uint8_t*, size_t, uint8_t*, size_t, int)>& one) {
  const size_t n = chunks_of(bytes);
  if (threads <= 1 || n <= 1) {
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t size = chunk_size(bytes, i);
      pos += one(src + i * kChunkBytes, size, dst + pos, bound(size), 0);
    }
    return pos;
  }
  std::vector<size_t> reserved(n + 1, 0), written(n);
  for (size_t i = 0; i < n; ++i) reserved[i + 1] = reserved[i] + bound(chunk_size(bytes, i));
  parallel_for(static_cast<int64_t>(n), threads, [&](int64_t i, int w) {
    const size_t size = chunk_size(bytes, i);
    written[i] = one(src + i * kChunkBytes, size, dst + reserved[i], reserved[i + 1] - reserved[i], w);
  });
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    std::memmove(dst + pos, dst + reserved[i], written[i]);
    pos += written[i];
  }
  return pos;
}

class NoneCodec final : public Codec {
 public:
  std::string name() const override { return "none"; }
  bool lossless() const override { return true; }
  size_t max_compressed_bytes(TensorView in) const override { return kHeaderBytes + in.bytes(); }
  size_t compress(TensorView in, std::span<uint8_t> out) override {
    if (out.size() < max_compressed_bytes(in))
      fail_baseline(Kind::None, "output buffer of " + std::to_string(out.size()) + " bytes is too small");
    write_baseline_header(Kind::None, in, out);
    if (in.bytes() > 0) std::memcpy(out.data() + kHeaderBytes, in.data, in.bytes());
    return kHeaderBytes + in.bytes();
  }
  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    const auto body = check_header(Kind::None, in, out);
    if (body.size() != out.bytes())
      fail_baseline(Kind::None, "size: the body has " + std::to_string(body.size()) + " bytes, the tensor " +
                           std::to_string(out.bytes()));
    if (!body.empty()) std::memcpy(out.data, body.data(), body.size());
  }
};

class ZstdCodec final : public Codec {
 public:
  ZstdCodec(int level, int threads) : level_(level), threads_(std::max(threads, 1)) {}
  ~ZstdCodec() override {
    for (auto* c : cctx_) ZSTD_freeCCtx(c);
    for (auto* d : dctx_) ZSTD_freeDCtx(d);
  }
  ZstdCodec(const ZstdCodec&) = delete;
  ZstdCodec& operator=(const ZstdCodec&) = delete;

  std::string name() const override { return "zstd"; }
  bool lossless() const override { return true; }
  size_t max_compressed_bytes(TensorView in) const override {
    const size_t bytes = in.bytes(), n = chunks_of(bytes);
    if (threads_ == 1 || n <= 1) return kHeaderBytes + ZSTD_compressBound(bytes);
    return kHeaderBytes + (n - 1) * ZSTD_compressBound(kChunkBytes) + ZSTD_compressBound(chunk_size(bytes, n - 1));
  }
  size_t compress(TensorView in, std::span<uint8_t> out) override {
    if (out.size() < max_compressed_bytes(in))
      fail_baseline(Kind::Zstd, "output buffer of " + std::to_string(out.size()) + " bytes is too small");
    write_baseline_header(Kind::Zstd, in, out);
    contexts(cctx_, ZSTD_createCCtx);
    auto one = [&](const uint8_t* src, size_t size, uint8_t* dst, size_t cap, int w) {
      const size_t r = ZSTD_compressCCtx(cctx_[static_cast<size_t>(w)], dst, cap, src, size, level_);
      if (ZSTD_isError(r)) fail_baseline(Kind::Zstd, std::string("compression failed: ") + ZSTD_getErrorName(r));
      return r;
    };
    uint8_t* dst = out.data() + kHeaderBytes;
    const size_t bytes = in.bytes();
    if (threads_ == 1 || bytes <= kChunkBytes) return kHeaderBytes + one(in.data, bytes, dst, out.size() - kHeaderBytes, 0);
    return kHeaderBytes + compress_chunks(in.data, bytes, dst, threads_, ZSTD_compressBound, one);
  }
  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    const auto body = check_header(Kind::Zstd, in, out);
    // Locate the frames and check their content sizes add up to the tensor before decoding any.
    struct Frame { size_t src, size, dst, content; };
    std::vector<Frame> frames;
    size_t pos = 0, produced = 0;
    while (pos < body.size()) {
      const size_t size = ZSTD_findFrameCompressedSize(body.data() + pos, body.size() - pos);
      if (ZSTD_isError(size))
        fail_baseline(Kind::Zstd, "frame " + std::to_string(frames.size()) + ": " + ZSTD_getErrorName(size));
      const unsigned long long content = ZSTD_getFrameContentSize(body.data() + pos, body.size() - pos);
      if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR)
        fail_baseline(Kind::Zstd, "frame " + std::to_string(frames.size()) + ": no content size");
      if (content > out.bytes() - produced)
        fail_baseline(Kind::Zstd, "frames hold more than the tensor's " + std::to_string(out.bytes()) + " bytes");
      frames.push_back({pos, size, produced, static_cast<size_t>(content)});
      pos += size;
      produced += static_cast<size_t>(content);
    }
    if (produced != out.bytes())
      fail_baseline(Kind::Zstd, "frames hold " + std::to_string(produced) + " bytes, the tensor " +
                           std::to_string(out.bytes()));
    contexts(dctx_, ZSTD_createDCtx);
    parallel_for(static_cast<int64_t>(frames.size()), threads_, [&](int64_t i, int w) {
      const Frame& f = frames[i];
      const size_t r = ZSTD_decompressDCtx(dctx_[static_cast<size_t>(w)], out.data + f.dst, f.content,
                                           body.data() + f.src, f.size);
      if (ZSTD_isError(r)) fail_baseline(Kind::Zstd, "frame " + std::to_string(i) + ": " + ZSTD_getErrorName(r));
      if (r != f.content)
        fail_baseline(Kind::Zstd, "frame " + std::to_string(i) + " decoded to " + std::to_string(r) + " bytes, not " +
                             std::to_string(f.content));
    });
  }

 private:
  // One context per worker, created on first use and reused (creating one costs more than a small frame).
  template <typename Ctx>
  void contexts(std::vector<Ctx*>& v, Ctx* (*create)()) {
    while (v.size() < static_cast<size_t>(threads_)) {
      Ctx* c = create();
      if (c == nullptr) fail_baseline(Kind::Zstd, "out of memory for a context");
      v.push_back(c);
    }
  }
  int level_;
  int threads_;
  std::vector<ZSTD_CCtx*> cctx_;
  std::vector<ZSTD_DCtx*> dctx_;
};

class Lz4Codec final : public Codec {
 public:
  explicit Lz4Codec(int threads) : threads_(std::max(threads, 1)) {}
  std::string name() const override { return "lz4"; }
  bool lossless() const override { return true; }
  size_t max_compressed_bytes(TensorView in) const override {
    const size_t bytes = in.bytes(), n = chunks_of(bytes);
    if (n == 0) return kHeaderBytes;
    return kHeaderBytes + (n - 1) * bound(kChunkBytes) + bound(chunk_size(bytes, n - 1));
  }
  size_t compress(TensorView in, std::span<uint8_t> out) override {
    if (out.size() < max_compressed_bytes(in))
      fail_baseline(Kind::Lz4, "output buffer of " + std::to_string(out.size()) + " bytes is too small");
    write_baseline_header(Kind::Lz4, in, out);
    auto one = [](const uint8_t* src, size_t size, uint8_t* dst, size_t cap, int) {
      const int r = LZ4_compress_default(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst + 4),
                                         static_cast<int>(size), static_cast<int>(cap - 4));
      if (r <= 0) fail_baseline(Kind::Lz4, "compression failed");
      const auto csize = static_cast<uint32_t>(r);
      std::memcpy(dst, &csize, 4);
      return size_t{4} + csize;
    };
    return kHeaderBytes + compress_chunks(in.data, in.bytes(), out.data() + kHeaderBytes, threads_, bound, one);
  }
  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    const auto body = check_header(Kind::Lz4, in, out);
    const size_t n = chunks_of(out.bytes());
    std::vector<size_t> block(n + 1);  // offsets of the blocks' size fields
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) {
      block[i] = pos;
      uint32_t csize;
      if (body.size() - pos < 4) fail_baseline(Kind::Lz4, "block " + std::to_string(i) + ": truncated size field");
      std::memcpy(&csize, body.data() + pos, 4);
      if (csize > body.size() - pos - 4) fail_baseline(Kind::Lz4, "block " + std::to_string(i) + ": runs past the stream");
      if (csize > bound(chunk_size(out.bytes(), i)) - 4)
        fail_baseline(Kind::Lz4, "block " + std::to_string(i) + ": " + std::to_string(csize) + " bytes exceed LZ4's bound");
      pos += 4 + size_t{csize};
    }
    block[n] = pos;
    if (pos != body.size())
      fail_baseline(Kind::Lz4, "size: " + std::to_string(body.size() - pos) + " bytes follow the last block");
    parallel_for(static_cast<int64_t>(n), threads_, [&](int64_t i, int) {
      const size_t size = chunk_size(out.bytes(), i);
      const auto csize = static_cast<int>(block[i + 1] - block[i] - 4);
      const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(body.data() + block[i] + 4),
                                        reinterpret_cast<char*>(out.data + i * kChunkBytes), csize,
                                        static_cast<int>(size));
      if (r != static_cast<int>(size))
        fail_baseline(Kind::Lz4, "block " + std::to_string(i) + ": corrupt (decoded " + std::to_string(r) + " of " +
                            std::to_string(size) + " bytes)");
    });
  }

 private:
  static size_t bound(size_t size) { return 4 + static_cast<size_t>(LZ4_compressBound(static_cast<int>(size))); }
  int threads_;
};

}  // namespace

std::unique_ptr<Codec> make_none_codec() { return std::make_unique<NoneCodec>(); }
std::unique_ptr<Codec> make_zstd_codec(int level, int threads) { return std::make_unique<ZstdCodec>(level, threads); }
std::unique_ptr<Codec> make_lz4_codec(int threads) { return std::make_unique<Lz4Codec>(threads); }

}  // namespace mlsb::compress
