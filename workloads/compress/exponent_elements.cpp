// The `exponent` codec's element kernels: splitting elements into symbols and raw (sign+mantissa) bytes and
// merging them back. 16-bit elements have AVX2 loops chosen at run time (util/simd.hpp) beside the portable
// loops, which also finish the remainders; fp32 elements take the portable loops.
#include <algorithm>
#include <type_traits>

#include "util/simd.hpp"
#include "workloads/compress/exponent_detail.hpp"

#ifdef MLSB_SIMD_X86
#include <immintrin.h>
#endif

namespace mlsb::compress::exponent_detail {
namespace {

// Element i's raw byte and symbol, as exponent.hpp defines them.
uint8_t raw_of(Bf16, uint16_t x) { return static_cast<uint8_t>(((x >> 8) & 0x80) | (x & 0x7F)); }
uint8_t raw_of(Fp16, uint16_t x) { return static_cast<uint8_t>(x); }
uint16_t merged(Bf16, uint8_t sym, uint8_t raw) {
  return static_cast<uint16_t>(((raw & 0x80) << 8) | (sym << 7) | (raw & 0x7F));
}
uint16_t merged(Fp16, uint8_t sym, uint8_t raw) { return static_cast<uint16_t>(sym << 8 | raw); }

template <typename E>
void split_portable(const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t x = load_elem<E>(in, i);
    raw[i] = raw_of(E{}, x);
    sym[i] = static_cast<uint8_t>(E::symbol(x));
  }
}

template <typename E>
void merge_portable(const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t x = merged(E{}, sym[i], raw[i]);
    std::memcpy(out + 2 * i, &x, 2);
  }
}

#ifdef MLSB_SIMD_X86
MLSB_TARGET_AVX2 inline __m256i load32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
MLSB_TARGET_AVX2 inline void store32(uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

/// The low bytes of a's then b's sixteen 16-bit lanes, in element order (each lane < 256).
MLSB_TARGET_AVX2 inline __m256i pack_bytes(__m256i a, __m256i b) {
  return _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
}

/// Sixteen 16-bit lanes' raw bytes and symbols (exponent.hpp), each in its lane's low byte.
MLSB_TARGET_AVX2 inline __m256i raw16(Bf16, __m256i x) {
  return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(x, 8), _mm256_set1_epi16(0x80)),
                         _mm256_and_si256(x, _mm256_set1_epi16(0x7F)));
}
MLSB_TARGET_AVX2 inline __m256i raw16(Fp16, __m256i x) { return _mm256_and_si256(x, _mm256_set1_epi16(0xFF)); }
MLSB_TARGET_AVX2 inline __m256i sym16(Bf16, __m256i x) {
  return _mm256_and_si256(_mm256_srli_epi16(x, 7), _mm256_set1_epi16(0xFF));
}
MLSB_TARGET_AVX2 inline __m256i sym16(Fp16, __m256i x) { return _mm256_srli_epi16(x, 8); }

/// Splits 32 16-bit elements per step.
template <typename E>
MLSB_TARGET_AVX2 void split_avx2(const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = load32(in + 2 * i), b = load32(in + 2 * i + 32);
    store32(raw + i, pack_bytes(raw16(E{}, a), raw16(E{}, b)));
    store32(sym + i, pack_bytes(sym16(E{}, a), sym16(E{}, b)));
  }
  split_portable<E>(in + 2 * i, n - i, sym + i, raw + i);
}

/// Stores 32 bytes, with a streaming store (p 32-byte aligned) when `how` says so.
MLSB_TARGET_AVX2 inline void store32(uint8_t* p, __m256i v, Stores how) {
  if (how == Stores::streaming) return _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
  store32(p, v);
}

/// Merges 32 elements per step: the high and low bytes of each, interleaved. Streaming stores start at the first
/// 64-byte line of `out` (ordinary stores before it, all of them when no element starts a line).
template <typename E>
MLSB_TARGET_AVX2 void merge_avx2(const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores how) {
  const __m256i m7f = _mm256_set1_epi8(0x7F), m80 = _mm256_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  if (how == Stores::streaming) {
    const auto address = reinterpret_cast<uintptr_t>(out);
    i = address % 2 != 0 ? n : std::min<int64_t>(n, static_cast<int64_t>(-address % 64 / 2));
    merge_portable<E>(sym, raw, i, out);
  }
  for (; i + 32 <= n; i += 32) {
    // Quarters 0, 2, 1, 3: unpacking within 128-bit halves then yields elements 0-15 and 16-31.
    const __m256i s = _mm256_permute4x64_epi64(load32(sym + i), 0xD8);
    const __m256i r = _mm256_permute4x64_epi64(load32(raw + i), 0xD8);
    __m256i hi = s, lo = r;
    if constexpr (std::is_same_v<E, Bf16>) {  // high byte: sign, exponent bits 7..1; low: exponent bit 0, mantissa
      hi = _mm256_or_si256(_mm256_and_si256(r, m80), _mm256_and_si256(_mm256_srli_epi16(s, 1), m7f));
      lo = _mm256_or_si256(_mm256_and_si256(r, m7f), _mm256_and_si256(_mm256_slli_epi16(s, 7), m80));
    }
    store32(out + 2 * i, _mm256_unpacklo_epi8(lo, hi), how);
    store32(out + 2 * i + 32, _mm256_unpackhi_epi8(lo, hi), how);
  }
  merge_portable<E>(sym + i, raw + i, n - i, out + 2 * i);
}
#endif

template <typename E>
void split16(const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return split_avx2<E>(in, n, sym, raw);
#endif
  split_portable<E>(in, n, sym, raw);
}

template <typename E>
void merge16(const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores how) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return merge_avx2<E>(sym, raw, n, out, how);
#endif
  merge_portable<E>(sym, raw, n, out);
}

}  // namespace

void split(Bf16, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) { split16<Bf16>(in, n, sym, raw); }
void split(Fp16, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw) { split16<Fp16>(in, n, sym, raw); }

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

void merge(Bf16, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores how) {
  merge16<Bf16>(sym, raw, n, out, how);
}
void merge(Fp16, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores how) {
  merge16<Fp16>(sym, raw, n, out, how);
}

void merge(Fp32, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t r = raw[3 * i] | (uint32_t{raw[3 * i + 1]} << 8) | (uint32_t{raw[3 * i + 2]} << 16);
    const uint32_t x = ((r & 0x800000u) << 8) | (uint32_t{sym[i]} << 23) | (r & 0x7FFFFFu);
    std::memcpy(out + 4 * i, &x, 4);
  }
}

void store_fence() {
#ifdef MLSB_SIMD_X86
  _mm_sfence();
#endif
}

}  // namespace mlsb::compress::exponent_detail
