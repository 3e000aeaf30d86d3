// The element-wise lossy codecs (cast-bf16, cast-fp16, int8-block, fp8-e4m3, fp8-e5m2); the stream format
// is documented in quantize.hpp.
#include "workloads/compress/quantize.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "workloads/compress/lossy_stream.hpp"
#include "workloads/compress/quant_math.hpp"
#include "workloads/compress/quantize_kernels.hpp"

namespace mlsb::compress {
namespace {

using detail::StreamReader;
using detail::StreamWriter;

std::string kind_name(QuantKind k) {
  switch (k) {
    case QuantKind::CastBf16: return "cast-bf16";
    case QuantKind::CastFp16: return "cast-fp16";
    case QuantKind::Int8Block: return "int8-block";
    case QuantKind::Fp8E4M3: return "fp8-e4m3";
    case QuantKind::Fp8E5M2: return "fp8-e5m2";
  }
  return "?";
}

bool blocked(QuantKind k) { return k == QuantKind::Int8Block || k == QuantKind::Fp8E4M3 || k == QuantKind::Fp8E5M2; }

// quant_math.hpp's KIND is QuantKind's value.
static_assert(static_cast<int>(QuantKind::Int8Block) == 3 && static_cast<int>(QuantKind::Fp8E4M3) == 4 &&
              static_cast<int>(QuantKind::Fp8E5M2) == 5);

/// Calls f(std::integral_constant<int, KIND>{}) for block kind k (quant_math.hpp's template argument).
template <typename F>
void with_block_kind(QuantKind k, F&& f) {
  switch (k) {
    case QuantKind::Int8Block: return f(std::integral_constant<int, 3>{});
    case QuantKind::Fp8E4M3: return f(std::integral_constant<int, 4>{});
    default: return f(std::integral_constant<int, 5>{});
  }
}

constexpr int64_t kTile = 8192;  // elements: 32 KiB of fp32 stay in L1 between widening and coding

/// The elements of a tile: about kTile, a multiple of `unit` (a block quantiser's block).
int64_t tile_elements(int64_t unit) { return std::max<int64_t>(1, kTile / unit) * unit; }

/// Calls f(x, begin, len) for consecutive tiles of the tensor's elements as fp32: the tensor's own memory in
/// one tile when it is aligned fp32, else tiles widened into a buffer, each a multiple of `unit` elements (a
/// block quantiser's block) but the last.
template <typename F>
void for_each_tile(TensorView in, int64_t unit, F&& f) {
  const int64_t n = in.count;
  if (n == 0) return;
  if (in.dtype == DType::F32 && reinterpret_cast<uintptr_t>(in.data) % alignof(float) == 0)
    return f(reinterpret_cast<const float*>(in.data), int64_t{0}, n);
  const int64_t tile = tile_elements(unit);
  std::vector<float> buf(static_cast<size_t>(std::min(tile, n)));
  for (int64_t begin = 0; begin < n; begin += tile) {
    const int64_t len = std::min(tile, n - begin);
    quant_kernels::widen(in.dtype, in.data + static_cast<size_t>(begin) * dtype_size(in.dtype), len, buf.data());
    f(static_cast<const float*>(buf.data()), begin, len);
  }
}

/// The decoding twin of for_each_tile: f(x, begin, len) writes the fp32 values of consecutive tiles, in the
/// tensor's own memory when it is aligned fp32, else in a buffer narrowed into it.
template <typename F>
void for_each_out_tile(MutableTensorView out, int64_t unit, F&& f) {
  const int64_t n = out.count;
  if (n == 0) return;
  const bool direct = out.dtype == DType::F32 && reinterpret_cast<uintptr_t>(out.data) % alignof(float) == 0;
  const int64_t tile = tile_elements(unit);
  std::vector<float> buf(direct ? 0 : static_cast<size_t>(std::min(tile, n)));
  for (int64_t begin = 0; begin < n; begin += tile) {
    const int64_t len = std::min(tile, n - begin);
    float* x = direct ? reinterpret_cast<float*>(out.data) + begin : buf.data();
    f(x, begin, len);
    if (!direct)
      quant_kernels::narrow(out.dtype, x, len, out.data + static_cast<size_t>(begin) * dtype_size(out.dtype));
  }
}

class QuantCodec final : public Codec {
 public:
  QuantCodec(QuantKind kind, int64_t block) : kind_(kind), block_(block) {
    if (blocked(kind) && (block < 1 || block > std::numeric_limits<uint32_t>::max()))
      throw std::invalid_argument("block: must be in [1, 2^32) elements (got " + std::to_string(block) + ")");
  }
  std::string name() const override { return kind_name(kind_); }
  bool lossless() const override { return false; }

  size_t max_compressed_bytes(TensorView in) const override { return payload_bytes(static_cast<uint64_t>(in.count), block_); }

  size_t compress(TensorView in, std::span<uint8_t> out) override {
    if (in.count < 0) throw CodecError(name() + ": negative element count");
    if (out.size() < max_compressed_bytes(in))
      throw CodecError(name() + ": output buffer of " + std::to_string(out.size()) + " bytes, need " +
                       std::to_string(max_compressed_bytes(in)));
    StreamWriter w(out, name());
    w.put(kQuantMagic);
    w.put(static_cast<uint8_t>(kind_));
    w.put(static_cast<uint8_t>(in.dtype));
    w.put(uint16_t{0});
    w.put(static_cast<uint64_t>(in.count));
    const int64_t n = in.count;
    switch (kind_) {
      case QuantKind::CastBf16: {
        uint8_t* dst = w.reserve(2 * static_cast<size_t>(n));
        for_each_tile(in, 1, [&](const float* x, int64_t begin, int64_t len) {
          quant_kernels::cast_bf16(x, len, dst + 2 * begin);
        });
        break;
      }
      case QuantKind::CastFp16: {
        float absmax = 0;
        for_each_tile(in, 1, [&](const float* x, int64_t, int64_t len) {
          absmax = std::max(absmax, quant_kernels::finite_absmax(x, len));
        });
        const int32_t k = quant::fp16_scale_exponent(absmax);
        w.put(k);
        uint8_t* dst = w.reserve(2 * static_cast<size_t>(n));
        // x * 2^k as one or two exact power-of-two products (k <= 163; 2^k is a normal float up to 127).
        const float first = std::ldexp(1.0f, std::min(k, 127)), second = std::ldexp(1.0f, std::max(k - 127, 0));
        for_each_tile(in, 1, [&](const float* x, int64_t begin, int64_t len) {
          quant_kernels::cast_fp16(x, len, first, second, dst + 2 * begin);
        });
        break;
      }
      default: with_block_kind(kind_, [&](auto kind) { encode_blocks<decltype(kind)::value>(in, w); }); break;
    }
    return w.size();
  }

  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    StreamReader r(in, name());
    if (r.get<uint32_t>("magic") != kQuantMagic) r.fail("not a quantised stream (bad magic)");
    const uint8_t kind = r.get<uint8_t>("kind");
    if (kind != static_cast<uint8_t>(kind_))
      r.fail("stream is of kind " + std::to_string(kind) + ", this codec decodes kind " +
             std::to_string(static_cast<int>(kind_)));
    const uint8_t dtype = r.get<uint8_t>("dtype");
    if (r.get<uint16_t>("reserved") != 0) r.fail("reserved header field is not 0");
    const uint64_t count = r.get<uint64_t>("count");
    detail::check_target(r, dtype, count, out);
    const int64_t n = out.count;
    switch (kind_) {
      case QuantKind::CastBf16: {
        const uint8_t* src = r.take(2 * static_cast<size_t>(n), "bf16 values");
        r.expect_end();
        for_each_out_tile(out, 1, [&](float* x, int64_t begin, int64_t len) {
          quant_kernels::widen(DType::BF16, src + 2 * begin, len, x);
        });
        break;
      }
      case QuantKind::CastFp16: {
        const int32_t k = r.get<int32_t>("scale exponent");
        if (k < -1000 || k > 1000) r.fail("scale exponent " + std::to_string(k) + " is out of range");
        const uint8_t* src = r.take(2 * static_cast<size_t>(n), "fp16 values");
        r.expect_end();
        for_each_out_tile(out, 1, [&](float* x, int64_t begin, int64_t len) {
          if (k >= -126 && k <= 126) {  // 2^-k is a normal float: one correctly rounded product, as ldexp's
            quant_kernels::widen_fp16_scaled(src + 2 * begin, len, std::ldexp(1.0f, -k), x);
          } else {
            quant_kernels::widen(DType::F16, src + 2 * begin, len, x);
            for (int64_t i = 0; i < len; ++i) x[i] = std::ldexp(x[i], -k);
          }
        });
        break;
      }
      default: with_block_kind(kind_, [&](auto kind) { decode_blocks<decltype(kind)::value>(r, out); }); break;
    }
  }

 private:
  size_t payload_bytes(uint64_t n, int64_t block) const {
    switch (kind_) {
      case QuantKind::CastBf16: return kQuantHeaderBytes + 2 * n;
      case QuantKind::CastFp16: return kQuantHeaderBytes + 4 + 2 * n;
      default: {
        const uint64_t b = static_cast<uint64_t>(block);
        return kQuantHeaderBytes + 4 + 4 * (n / b + (n % b != 0)) + n;
      }
    }
  }

  template <int KIND>
  void encode_blocks(TensorView in, StreamWriter& w) const {
    const int64_t n = in.count, b = block_;
    const int64_t blocks = n / b + (n % b != 0);
    w.put(static_cast<uint32_t>(b));
    uint8_t* scales = w.reserve(4 * static_cast<size_t>(blocks));
    uint8_t* codes = w.reserve(static_cast<size_t>(n));
    for_each_tile(in, b, [&](const float* x, int64_t begin, int64_t len) {
      quant_kernels::encode_blocks<KIND>(x, len, b, scales + 4 * (begin / b), codes + begin);
    });
  }

  template <int KIND>
  void decode_blocks(StreamReader& r, MutableTensorView out) const {
    const uint32_t b = r.get<uint32_t>("block");
    if (b == 0) r.fail("block size is 0");
    const uint64_t n = static_cast<uint64_t>(out.count);
    const uint64_t blocks = n / b + (n % b != 0);
    if (r.remaining() != 4 * blocks + n)
      r.fail("stream has " + std::to_string(r.remaining()) + " bytes after the header, " + std::to_string(blocks) +
             " scales and " + std::to_string(n) + " codes need " + std::to_string(4 * blocks + n));
    const uint8_t* scales = r.take(4 * blocks, "scales");
    const uint8_t* codes = r.take(n, "codes");
    for_each_out_tile(out, b, [&](float* x, int64_t begin, int64_t len) {
      quant_kernels::decode_blocks<KIND>(scales + 4 * (begin / b), codes + begin, len, b, x);
    });
  }

  QuantKind kind_;
  int64_t block_;
};

}  // namespace

std::unique_ptr<Codec> make_quant_codec(QuantKind kind, int64_t block) {
  return std::make_unique<QuantCodec>(kind, block);
}

}  // namespace mlsb::compress
