#pragma once
// Per-element arithmetic of the CUDA codecs, written once for the device and the host: the kernels use
// it, and a CPU unit test (tests/unit/cuda/) checks it against the CPU codecs bit for bit, so the GPU
// streams match the CPU streams' rounding without a GPU to test on. Everything is integer bit
// manipulation or a single IEEE-rounded fp32 operation (division, multiplication, rint, ldexp), which
// the device computes exactly as the host (nvcc's defaults: -prec-div=true, no flush to zero).
// Semantics follow workloads/compress/tensor.hpp (conversions), quantize.hpp and exponent.hpp (formats). The
// lossy codecs' per-element arithmetic (block scales, codes, cast-fp16's exponent) is quant_math.hpp's,
// which the CPU codecs share.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backends/formats/small_floats.hpp"
#include "workloads/compress/quant_math.hpp"

namespace mlsb::compress::gpu::math {

using namespace mlsb::formats;  // the conversions (bf16, fp16, fp8) are shared with the CPU codecs

/// Element i of a tensor as fp32 (dtype 0 fp32, 1 fp16, 2 bf16), exact.
template <int DT>
MLSB_HD float load_elem(const uint8_t* data, int64_t i) {
  if constexpr (DT == 0) {
    return reinterpret_cast<const float*>(data)[i];
  } else {
    const uint16_t h = reinterpret_cast<const uint16_t*>(data)[i];
    return DT == 1 ? fp16_to_f32(h) : bf16_to_f32(h);
  }
}
template <int DT>
MLSB_HD void store_elem(uint8_t* data, int64_t i, float f) {
  if constexpr (DT == 0) {
    reinterpret_cast<float*>(data)[i] = f;
  } else {
    reinterpret_cast<uint16_t*>(data)[i] = DT == 1 ? f32_to_fp16(f) : f32_to_bf16(f);
  }
}

/// ldexp as the host's libm computes it for every input: NaN comes back quieted with its payload, Inf
/// unchanged, finite values scaled with one rounding (the device's ldexpf returns a canonical NaN).
MLSB_HD float ldexp_like_host(float x, int k) {
  const uint32_t b = f2u(x);
  if (is_nan_bits(b)) return u2f(b | 0x00400000u);
  if (!is_finite_bits(b)) return x;
#ifdef __CUDA_ARCH__
  return ldexpf(x, k);
#else
  return std::ldexp(x, k);
#endif
}

// ---- exponent: symbol / raw split of one element (exponent.hpp) ----

template <int DT> struct ExpTraits;
template <> struct ExpTraits<0> {  // fp32: symbol = exponent, raw = sign + 23 mantissa bits (3 bytes)
  using Bits = uint32_t;
  static constexpr int raw_bytes = 3;
  MLSB_HD static uint32_t symbol(uint32_t x) { return (x >> 23) & 0xFFu; }
  MLSB_HD static uint32_t raw(uint32_t x) { return ((x >> 8) & 0x800000u) | (x & 0x7FFFFFu); }
  MLSB_HD static uint32_t join(uint32_t sym, uint32_t raw) {
    return ((raw & 0x800000u) << 8) | (sym << 23) | (raw & 0x7FFFFFu);
  }
};
template <> struct ExpTraits<1> {  // fp16: symbol = sign, exponent, top 2 mantissa bits; raw = low byte
  using Bits = uint16_t;
  static constexpr int raw_bytes = 1;
  MLSB_HD static uint32_t symbol(uint32_t x) { return x >> 8; }
  MLSB_HD static uint32_t raw(uint32_t x) { return x & 0xFFu; }
  MLSB_HD static uint32_t join(uint32_t sym, uint32_t raw) { return (sym << 8) | raw; }
};
template <> struct ExpTraits<2> {  // bf16: symbol = exponent, raw = sign + 7 mantissa bits
  using Bits = uint16_t;
  static constexpr int raw_bytes = 1;
  MLSB_HD static uint32_t symbol(uint32_t x) { return (x >> 7) & 0xFFu; }
  MLSB_HD static uint32_t raw(uint32_t x) { return ((x >> 8) & 0x80u) | (x & 0x7Fu); }
  MLSB_HD static uint32_t join(uint32_t sym, uint32_t raw) { return ((raw & 0x80u) << 8) | (sym << 7) | (raw & 0x7Fu); }
};

/// Decode table entry: symbol in the low byte, code length in bits 8..11 (0 = no code has this prefix).
/// The table has 2^L entries indexed by the next L bits of the stream.
MLSB_HD uint32_t table_symbol(uint16_t e) { return e & 0xFFu; }
MLSB_HD int table_length(uint16_t e) { return e >> 8; }

/// Canonical codes (RFC 1951 3.2.2) of code lengths <= 12: codes[s] right-aligned in len[s] bits.
/// Host side; the lengths must satisfy Kraft's inequality (the caller validated them).
inline void canonical_codes(const uint8_t* len, uint16_t* codes) {
  int count[13] = {};
  for (int s = 0; s < 256; ++s) ++count[len[s] <= 12 ? len[s] : 0];
  count[0] = 0;
  uint32_t next[13] = {}, code = 0;
  for (int l = 1; l <= 12; ++l) {
    code = (code + static_cast<uint32_t>(count[l - 1])) << 1;
    next[l] = code;
  }
  for (int s = 0; s < 256; ++s) codes[s] = len[s] && len[s] <= 12 ? static_cast<uint16_t>(next[len[s]]++) : 0;
}

/// The 2^L-entry decode table of code lengths (all <= L, L in 1..12): entry = symbol | length << 8,
/// 0 where no code has the prefix. Host side.
inline void build_decode_table(const uint8_t* len, int L, uint16_t* table) {
  uint16_t codes[256];
  canonical_codes(len, codes);
  for (uint32_t i = 0; i < (1u << L); ++i) table[i] = 0;
  for (int s = 0; s < 256; ++s) {
    if (len[s] == 0 || len[s] > L) continue;
    const uint32_t first = static_cast<uint32_t>(codes[s]) << (L - len[s]), n = 1u << (L - len[s]);
    for (uint32_t i = 0; i < n && first + i < (1u << L); ++i) table[first + i] = static_cast<uint16_t>(s | len[s] << 8);
  }
}

/// Stream s of a chunk of n elements cut into streams of q elements (q = ceil(n / streams); the last streams
/// may be short or empty): its first element and length. 64-bit: a chunk may hold up to 2^32 - 1 elements,
/// where s * q and first + q pass 2^32.
struct StreamSpan {
  uint64_t first, len;
};
MLSB_HD StreamSpan stream_span(uint32_t n, uint32_t q, uint32_t s) {
  const uint64_t at = static_cast<uint64_t>(s) * q, first = at < n ? at : n;
  const uint64_t end = first + q < n ? first + q : n;
  return {first, end - first};
}

/// Errors a stream decoder reports (the first one wins).
enum DecodeError : int { kDecodeOk = 0, kDecodeOverrun = 1, kDecodeBadCode = 2, kDecodeTrailing = 3, kDecodePadding = 4 };

/// MSB-first reader of one bitstream [p, end), resumable between windows of symbols. Reads bytes one at
/// a time so it never touches memory outside its stream.
struct BitReader {
  const uint8_t* p;
  const uint8_t* end;
  uint64_t acc;  ///< the next `avail` bits, most significant first
  int avail;

  MLSB_HD void init(const uint8_t* begin, const uint8_t* stop) {
    p = begin;
    end = stop;
    acc = 0;
    avail = 0;
  }
  MLSB_HD void refill() {
    while (avail <= 56 && p < end) {
      acc |= static_cast<uint64_t>(*p++) << (56 - avail);
      avail += 8;
    }
  }
  /// Decodes n symbols into out[0, n); returns a DecodeError.
  MLSB_HD int decode(const uint16_t* table, int L, uint8_t* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (avail < L) refill();
      const uint16_t e = table[acc >> (64 - L)];
      const int len = table_length(e);
      if (len == 0) return kDecodeBadCode;
      if (len > avail) return kDecodeOverrun;
      acc <<= len;
      avail -= len;
      out[i] = static_cast<uint8_t>(table_symbol(e));
    }
    return kDecodeOk;
  }
  /// After the stream's last symbol: the bytes are used up and the padding bits are zero.
  MLSB_HD int finish() const {
    if (p != end || avail >= 8) return kDecodeTrailing;
    return acc == 0 ? kDecodeOk : kDecodePadding;
  }
};

}  // namespace mlsb::compress::gpu::math
