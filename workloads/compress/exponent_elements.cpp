// The `exponent` codec's element kernels: splitting elements into symbols and raw (sign+mantissa)
// bytes and merging them back, with SSE2 where the target has it (every x86-64) and portable loops
// elsewhere and for the remainders.
#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "workloads/compress/exponent_detail.hpp"

namespace mlsb::compress::exponent_detail {
namespace {

#if defined(__SSE2__)
__m128i load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
void store16(uint8_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
#endif

}  // namespace

void split(Bf16, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128i m7f = _mm_set1_epi16(0x7F), m80 = _mm_set1_epi16(0x80), mff = _mm_set1_epi16(0xFF);
  for (; i + 16 <= n; i += 16) {
    const __m128i a = load16(in + 2 * i), b = load16(in + 2 * i + 16);
    const __m128i ra = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(a, 8), m80), _mm_and_si128(a, m7f));
    const __m128i rb = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(b, 8), m80), _mm_and_si128(b, m7f));
    store16(raw + i, _mm_packus_epi16(ra, rb));
    store16(sym + i, _mm_packus_epi16(_mm_and_si128(_mm_srli_epi16(a, 7), mff), _mm_and_si128(_mm_srli_epi16(b, 7), mff)));
  }
#endif
  for (; i < n; ++i) {
    const uint16_t x = load_elem<Bf16>(in, i);
    raw[i] = static_cast<uint8_t>(((x >> 8) & 0x80) | (x & 0x7F));
    sym[i] = static_cast<uint8_t>(Bf16::symbol(x));
  }
}

void split(Fp16, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128i mff = _mm_set1_epi16(0xFF);
  for (; i + 16 <= n; i += 16) {
    const __m128i a = load16(in + 2 * i), b = load16(in + 2 * i + 16);
    store16(raw + i, _mm_packus_epi16(_mm_and_si128(a, mff), _mm_and_si128(b, mff)));
    store16(sym + i, _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8)));
  }
#endif
  for (; i < n; ++i) {
    raw[i] = in[2 * i];
    sym[i] = in[2 * i + 1];
  }
}

void split(Fp32, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t x = load_elem<Fp32>(in, i);
    raw[3 * i] = static_cast<uint8_t>(x);
    raw[3 * i + 1] = static_cast<uint8_t>(x >> 8);
    raw[3 * i + 2] = static_cast<uint8_t>(((x >> 24) & 0x80) | ((x >> 16) & 0x7F));
    sym[i] = static_cast<uint8_t>(Fp32::symbol(x));
  }
}

void split_symbols(DType t, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) {
  switch (t) {
    case DType::BF16: return split(Bf16{}, in, n, sym, raw);
    case DType::F16: return split(Fp16{}, in, n, sym, raw);
    case DType::F32: return split(Fp32{}, in, n, sym, raw);
  }
}

void split_raw(DType t, const uint8_t* in, int64_t n, uint8_t* raw) {
  constexpr int64_t kBlock = 4096;
  uint8_t sym[kBlock];
  const size_t size = dtype_size(t), raw_size = exponent_raw_bytes(t);
  for (int64_t b = 0; b < n; b += kBlock)
    split_symbols(t, in + static_cast<size_t>(b) * size, std::min(kBlock, n - b), sym,
                  raw + static_cast<size_t>(b) * raw_size);
}

void merge(Bf16, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128i m7f = _mm_set1_epi8(0x7F), m80 = _mm_set1_epi8(static_cast<char>(0x80));
  for (; i + 16 <= n; i += 16) {
    const __m128i s = load16(sym + i), r = load16(raw + i);
    // High byte: sign, exponent bits 7..1; low byte: exponent bit 0, mantissa.
    const __m128i hi = _mm_or_si128(_mm_and_si128(r, m80), _mm_and_si128(_mm_srli_epi16(s, 1), m7f));
    const __m128i lo = _mm_or_si128(_mm_and_si128(r, m7f), _mm_and_si128(_mm_slli_epi16(s, 7), m80));
    store16(out + 2 * i, _mm_unpacklo_epi8(lo, hi));
    store16(out + 2 * i + 16, _mm_unpackhi_epi8(lo, hi));
  }
#endif
  for (; i < n; ++i) {
    const auto x = static_cast<uint16_t>(((raw[i] & 0x80) << 8) | (sym[i] << 7) | (raw[i] & 0x7F));
    std::memcpy(out + 2 * i, &x, 2);
  }
}

void merge(Fp16, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) {
    const __m128i s = load16(sym + i), r = load16(raw + i);
    store16(out + 2 * i, _mm_unpacklo_epi8(r, s));
    store16(out + 2 * i + 16, _mm_unpackhi_epi8(r, s));
  }
#endif
  for (; i < n; ++i) {
    out[2 * i] = raw[i];
    out[2 * i + 1] = sym[i];
  }
}

void merge(Fp32, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t r = raw[3 * i] | (uint32_t{raw[3 * i + 1]} << 8) | (uint32_t{raw[3 * i + 2]} << 16);
    const uint32_t x = ((r & 0x800000u) << 8) | (uint32_t{sym[i]} << 23) | (r & 0x7FFFFFu);
    std::memcpy(out + 4 * i, &x, 4);
  }
}

}  // namespace mlsb::compress::exponent_detail
