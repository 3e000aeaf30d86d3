// The `exponent` encoder (format in exponent.hpp).
//
// One read of the tensor: the code comes from a strided sample (1/16 of a large tensor, smoothed so
// rare neighbours of the sampled exponents get codes too), and chunks are then encoded straight into
// the output; a stream's size is known once it is written. Sign+mantissa bytes are staged after the
// worst-case end of the bitstreams and moved down once the bitstreams' total is known. Should the
// tensor hold a symbol the sampled code lacks, the encoder starts over with the exact histogram; small
// tensors use the exact histogram from the start. The stream depends on the data and params only,
// never on the thread count.
#include <algorithm>
#include <string>

#include "util/simd.hpp"
#include "workloads/compress/exponent_detail.hpp"

namespace mlsb::compress {
namespace {

using namespace exponent_detail;

constexpr int64_t kBlock = 4096;               // elements split into symbols + raw bytes at once (L1)
constexpr int64_t kSampleRun = 1024;           // the sample: every kSampleStride-th run of kSampleRun
constexpr int64_t kSampleStride = 16;
constexpr int64_t kExactBelow = int64_t{1} << 21;  // smaller tensors take the exact histogram
constexpr int kTailOctaves = 6;                // smoothing reaches this many octaves below the sample

// Per symbol and per pair of symbols (index s0 | s1 << 8, the byte order of two adjacent symbols): the code
// left-aligned at bit 63 (a pair's code, at most 24 bits, is code(s0) code(s1)) and its length in bits 0-5. An
// entry involving a symbol without a code has no code and the length field kNoCode instead. Bits 10-39 are zero,
// so a sum of up to eight entries holds their length fields' sum (< 1024) in bits 0-9, >= kNoCode when a symbol
// lacks a code.
constexpr uint64_t kNoCode = 64;
constexpr uint64_t kMeta = 1023;  // the bits of an entry, or of a sum of entries, below any code
// The most bits the fast loop writes at once: codes that lie above kMeta and fit beside up to 7 pending bits.
constexpr uint64_t kGroupBits = 54;

struct EncodeTable {
  std::array<uint64_t, 256> single;
  std::vector<uint64_t> pair;
  int group;  // symbols the fast loop writes at once: 16 where codes are short, so that 16 rarely exceed kGroupBits
};

uint64_t encode_entry(uint32_t code, uint32_t len) { return uint64_t{code} << (64 - len) | len; }

// Groups of 16 symbols take kGroupBits = 54 bits or fewer nearly always when the mean code length (by the
// histogram the code was built from) is at most 46 / 16 bits.
EncodeTable build_encode_table(const std::array<uint8_t, 256>& len, const std::array<uint64_t, 256>& hist) {
  std::array<uint16_t, 256> codes;
  huffman_canonical_codes(len, codes);
  EncodeTable t;
  double bits = 0, count = 0;
  for (int s = 0; s < 256; ++s) {
    bits += static_cast<double>(hist[s]) * len[s];
    count += static_cast<double>(hist[s]);
  }
  t.group = 16 * bits <= 46 * count ? 16 : 8;
  t.pair.assign(size_t{1} << 16, kNoCode);
  for (uint32_t a = 0; a < 256; ++a) {
    t.single[a] = len[a] == 0 ? kNoCode : encode_entry(codes[a], len[a]);
    for (uint32_t b = 0; b < 256 && len[a] != 0; ++b)
      if (len[b] != 0) t.pair[a | b << 8] = encode_entry(uint32_t{codes[a]} << len[b] | codes[b], len[a] + len[b]);
  }
  return t;
}

[[gnu::always_inline]] inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

// A stream's bits not yet in a complete byte, left-aligned at bit 63 (zero below them), and the number of bits
// written, those included. Two words, passed by value, so that it stays in registers: in memory, every store to
// the stream might alias it.
struct BitWriter {
  uint64_t acc = 0;
  uint64_t pos = 0;

  /// Writes `codes` (metadata bits cleared) of `len` bits to `dst` as 8 bytes at the byte of bit `pos`;
  /// needs (pos & 7) + len <= 64.
  [[gnu::always_inline]] void put(uint8_t* dst, uint64_t codes, uint64_t len) {
    const uint64_t pending = pos & 7;
    acc |= codes >> pending;
    store_be64(dst + (pos >> 3), acc);
    acc <<= (pending + len) & 56;
    pos += len;
  }
  /// The same with single-byte stores of the complete bytes only.
  [[gnu::always_inline]] void put_bytes(uint8_t* dst, uint64_t codes, uint64_t len) {
    const uint64_t pending = pos & 7;
    acc |= codes >> pending;
    for (uint64_t k = 0; k < (pending + len) >> 3; ++k, acc <<= 8)
      dst[(pos >> 3) + k] = static_cast<uint8_t>(acc >> 56);
    pos += len;
  }
};

// Writes the codes of G symbols pair by pair; `missing` collects the pairs' entries.
template <int G>
[[gnu::noinline]] BitWriter put_pairs(BitWriter w, uint8_t* dst, const uint8_t* sym, const uint64_t* pair,
                                      uint64_t& missing) {
  for (int k = 0; k < G / 2; ++k) {
    const uint64_t e = pair[load_u16(sym + 2 * k)];
    missing |= e;
    w.put(dst, e & ~kMeta, e & 63);
  }
  return w;
}

// Writes the codes of G symbols (G / 2 pair entries) at once when they take at most kGroupBits bits, else
// put_pairs() does.
template <int G>
[[gnu::always_inline]] inline BitWriter put_group(BitWriter w, uint8_t* dst, const uint8_t* sym, const uint64_t* pair,
                                                  uint64_t& missing) {
  // v[k]: the codes of a run of entries from the k-th, left-aligned; s[k]: the sum of those entries. Runs merge
  // pairwise; shifts count modulo 64, which is the length of a run when the group is written at once.
  uint64_t v[G / 2], s[G / 2];
#pragma GCC unroll 8
  for (int k = 0; k < G / 2; ++k) v[k] = s[k] = pair[load_u16(sym + 2 * k)];
#pragma GCC unroll 8
  for (int width = 1; width < G / 2; width *= 2) {
#pragma GCC unroll 8
    for (int k = 0; k < G / 2; k += 2 * width) {
      v[k] |= v[k + width] >> (s[k] & 63);
      s[k] += s[k + width];
    }
  }
  const uint64_t bits = s[0] & kMeta;
  if (bits > kGroupBits) [[unlikely]]
    return put_pairs<G>(w, dst, sym, pair, missing);
  w.put(dst, v[0] & ~kMeta, bits);
  return w;
}

// Encodes elements [0, n) of `src` in groups of G symbols: codes MSB-first to `dst` (returns the bytes
// written), raw bytes to `raw`; sets `missing` to 1 when a symbol has no code. The 8-byte stores of the fast loop
// stay within ceil(n * max_len / 8) bytes, and within the exact size when every symbol has a code, because at
// least 64 more codes follow each of them.
template <typename E, int G>
[[gnu::always_inline]] inline size_t encode_stream_body(const uint8_t* src, int64_t n, const EncodeTable& t,
                                                        uint8_t* dst, uint8_t* raw, uint32_t& missing) {
  uint8_t sym[kBlock];
  const uint64_t* pair = t.pair.data();
  BitWriter w;
  uint64_t flags = 0;
  for (int64_t block = 0; block < n; block += kBlock) {
    const int64_t m = std::min(kBlock, n - block);
    split(E{}, src + block * static_cast<int64_t>(sizeof(typename E::U)), m, sym,
          raw + block * static_cast<int64_t>(E::kRaw));
    int64_t j = 0;
    // The next block streams in from memory, and the lines its raw bytes go to are fetched, while this one is
    // coded. (Addresses, not pointers: past the tensor's end they are only hints, which never fault.)
    const uintptr_t ahead =
        reinterpret_cast<uintptr_t>(src) + static_cast<uintptr_t>(block + kBlock) * sizeof(typename E::U);
    const uintptr_t raw_ahead = reinterpret_cast<uintptr_t>(raw) + static_cast<uintptr_t>(block + kBlock) * E::kRaw;
    for (const int64_t fast = std::min(m, n - 64 - block); j + G <= fast; j += G) {
      __builtin_prefetch(reinterpret_cast<const void*>(ahead + static_cast<uintptr_t>(j) * sizeof(typename E::U)));
      __builtin_prefetch(reinterpret_cast<const void*>(raw_ahead + static_cast<uintptr_t>(j) * E::kRaw), 1);
      w = put_group<G>(w, dst, sym + j, pair, flags);
    }
    for (; j < m; ++j) {
      const uint64_t e = t.single[sym[j]];
      flags |= e;
      w.put_bytes(dst, e & ~kMeta, e & 63);
    }
  }
  if ((w.pos & 7) != 0) dst[w.pos >> 3] = static_cast<uint8_t>(w.acc >> 56);
  missing |= (flags & kNoCode) != 0 ? 1 : 0;
  return static_cast<size_t>((w.pos + 7) >> 3);
}

// The same code compiled for AVX2 and BMI2 (shifts by a register without the CL register) where the CPU has them.
template <typename E, int G>
size_t encode_stream_portable(const uint8_t* src, int64_t n, const EncodeTable& t, uint8_t* dst, uint8_t* raw,
                              uint32_t& missing) {
  return encode_stream_body<E, G>(src, n, t, dst, raw, missing);
}
#ifdef MLSB_SIMD_X86
template <typename E, int G>
MLSB_TARGET_AVX2 size_t encode_stream_avx2(const uint8_t* src, int64_t n, const EncodeTable& t, uint8_t* dst,
                                           uint8_t* raw, uint32_t& missing) {
  return encode_stream_body<E, G>(src, n, t, dst, raw, missing);
}
#endif

template <typename E, int G>
size_t encode_stream_group(const uint8_t* src, int64_t n, const EncodeTable& t, uint8_t* dst, uint8_t* raw,
                           uint32_t& missing) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return encode_stream_avx2<E, G>(src, n, t, dst, raw, missing);
#endif
  return encode_stream_portable<E, G>(src, n, t, dst, raw, missing);
}

template <typename E>
size_t encode_stream(const uint8_t* src, int64_t n, const EncodeTable& t, uint8_t* dst, uint8_t* raw,
                     uint32_t& missing) {
  if (t.group == 16) return encode_stream_group<E, 16>(src, n, t, dst, raw, missing);
  return encode_stream_group<E, 8>(src, n, t, dst, raw, missing);
}

// The histogram of a strided sample, with pseudo-counts for symbols near the sampled ones: a few octaves
// below the smallest sampled magnitude (Gaussian-like tails thin out by about 2x per octave, so the
// full tensor reaches about log2(kSampleStride) octaves further), one above the largest, and zero.
// A sample of fewer than two distinct symbols is returned as it is.
std::array<uint64_t, 256> sampled_histogram(TensorView in) {
  if (in.count >= (int64_t{1} << 36)) return {};  // beyond the counters: the caller falls back to exact
  std::array<uint64_t, 256> hist{};
  uint32_t t[4][256] = {};  // interleaved counters; the sample has < 2^32 elements (< 2^36 / 16)
  uint8_t sym[kSampleRun], raw[kSampleRun * 3];
  const size_t size = dtype_size(in.dtype);
  for (int64_t b = 0; b < in.count; b += kSampleRun * kSampleStride) {
    const int64_t n = std::min(kSampleRun, in.count - b);
    split_symbols(in.dtype, in.data + static_cast<size_t>(b) * size, n, sym, raw);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) ++t[0][sym[i]], ++t[1][sym[i + 1]], ++t[2][sym[i + 2]], ++t[3][sym[i + 3]];
    for (; i < n; ++i) ++t[0][sym[i]];
  }
  for (int s = 0; s < 256; ++s) hist[s] = uint64_t{t[0][s]} + t[1][s] + t[2][s] + t[3][s];
  // fp16 symbols are sign, exponent, two mantissa bits: magnitude in the low 7 bits, 4 per octave.
  const bool fp16 = in.dtype == DType::F16;
  const int per_octave = fp16 ? 4 : 1, magnitudes = fp16 ? 128 : 256;
  int lo = magnitudes, hi = -1, distinct = 0;
  for (int s = 0; s < 256; ++s) {
    if (hist[s] == 0) continue;
    lo = std::min(lo, s % magnitudes);
    hi = std::max(hi, s % magnitudes);
    ++distinct;
  }
  if (distinct < 2) return hist;  // the tensor may be constant: the caller takes the exact histogram
  for (int s = 0; s < 256; ++s) {
    const int m = s % magnitudes;
    if (hist[s] == 0 && (m == 0 || (m >= lo - kTailOctaves * per_octave && m <= hi + per_octave))) hist[s] = 1;
  }
  return hist;
}

std::array<uint64_t, 256> exact_histogram(TensorView in, const Geometry& g, int workers) {
  const size_t size = dtype_size(in.dtype);
  std::vector<std::array<uint64_t, 256>> partial(static_cast<size_t>(workers), std::array<uint64_t, 256>{});
  parallel_for(g.chunks, workers, [&](int64_t c, int w) {
    std::array<uint64_t, 256> h;
    exponent_histogram(TensorView{in.data + static_cast<size_t>(g.chunk_begin(c)) * size, g.chunk_size(c), in.dtype}, h);
    for (int k = 0; k < 256; ++k) partial[static_cast<size_t>(w)][k] += h[k];
  });
  std::array<uint64_t, 256> hist{};
  for (const auto& h : partial)
    for (int k = 0; k < 256; ++k) hist[k] += h[k];
  return hist;
}

void write_header(TensorView in, const ExponentParams& params, int max_len, uint8_t sole,
                  const std::array<uint8_t, 256>& len, uint8_t* o) {
  std::memset(o, 0, kExponentHeaderBytes);
  std::memcpy(o, &kExponentMagic, 4);
  o[4] = static_cast<uint8_t>(in.dtype);
  o[5] = static_cast<uint8_t>(max_len);
  o[6] = sole;
  const auto count = static_cast<uint64_t>(in.count);
  std::memcpy(o + 8, &count, 8);
  std::memcpy(o + 16, &params.chunk_elems, 4);
  std::memcpy(o + 20, &params.streams_per_chunk, 4);
  std::memcpy(o + 24, len.data(), 256);
}

// Encodes with code lengths `len`; returns the stream's size, or 0 when a symbol lacks a code.
template <typename E>
size_t encode_all(TensorView in, const ExponentParams& params, const Geometry& g, int workers,
                  const std::array<uint64_t, 256>& hist, const std::array<uint8_t, 256>& len, int max_len,
                  std::span<uint8_t> out) {
  constexpr size_t kSize = sizeof(typename E::U);
  const auto nstreams = static_cast<size_t>(g.chunks * g.streams);
  // Worst-case places: chunk c's bitstreams within [reserved[c], reserved[c + 1]), raw bytes staged
  // after the last.
  std::vector<size_t> reserved(static_cast<size_t>(g.chunks) + 1);
  reserved[0] = kExponentHeaderBytes + 4 * nstreams;
  for (int64_t c = 0; c < g.chunks; ++c) {
    const int64_t n = g.chunk_size(c);
    size_t bound = 0;
    for (int64_t s = 0; s < g.streams; ++s)
      bound += static_cast<size_t>(((g.stream_begin(n, s + 1) - g.stream_begin(n, s)) * max_len + 7) / 8);
    reserved[static_cast<size_t>(c) + 1] = reserved[static_cast<size_t>(c)] + bound;
  }
  const size_t staged = reserved.back(), raw_size = static_cast<size_t>(in.count) * E::kRaw;
  if (out.size() < staged + raw_size)
    fail("output buffer of " + std::to_string(out.size()) + " bytes is smaller than max_compressed_bytes (" +
         std::to_string(staged + raw_size) + " needed at most)");
  uint8_t* o = out.data();

  const EncodeTable table = build_encode_table(len, hist);
  std::vector<uint32_t> stream_bytes(nstreams);
  std::vector<size_t> chunk_bytes(static_cast<size_t>(g.chunks));
  std::vector<uint32_t> missing(static_cast<size_t>(workers), 0);
  size_t running = reserved[0];  // one worker writes every chunk in place
  parallel_for(g.chunks, workers, [&](int64_t c, int w) {
    const int64_t n = g.chunk_size(c), begin = g.chunk_begin(c);
    uint8_t* dst = o + (workers == 1 ? running : reserved[static_cast<size_t>(c)]);
    size_t total = 0;
    for (int64_t s = 0; s < g.streams; ++s) {
      const int64_t first = begin + g.stream_begin(n, s);
      const size_t bytes = encode_stream<E>(in.data + first * static_cast<int64_t>(kSize), g.stream_begin(n, s + 1) - g.stream_begin(n, s),
                                            table, dst + total, o + staged + static_cast<size_t>(first) * E::kRaw,
                                            missing[static_cast<size_t>(w)]);
      stream_bytes[static_cast<size_t>(c * g.streams + s)] = static_cast<uint32_t>(bytes);
      total += bytes;
    }
    chunk_bytes[static_cast<size_t>(c)] = total;
    if (workers == 1) running += total;
  });
  if (std::any_of(missing.begin(), missing.end(), [](uint32_t m) { return m != 0; })) return 0;

  size_t pos = reserved[0];
  for (int64_t c = 0; c < g.chunks && workers > 1; ++c) {
    std::memmove(o + pos, o + reserved[static_cast<size_t>(c)], chunk_bytes[static_cast<size_t>(c)]);
    pos += chunk_bytes[static_cast<size_t>(c)];
  }
  if (workers == 1) pos = running;
  if (pos != staged) std::memmove(o + pos, o + staged, raw_size);
  write_header(in, params, max_len, 0, len, o);
  std::memcpy(o + kExponentHeaderBytes, stream_bytes.data(), 4 * nstreams);
  return pos + raw_size;
}

template <typename E>
size_t compress_typed(TensorView in, const ExponentParams& params, std::span<uint8_t> out) {
  const Geometry g(in.count, params.chunk_elems, params.streams_per_chunk);
  const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(params.threads, g.chunks)));
  bool exact = in.count < kExactBelow;
  std::array<uint64_t, 256> hist = exact ? exact_histogram(in, g, workers) : sampled_histogram(in);
  for (;;) {
    std::array<uint8_t, 256> len;
    huffman_code_lengths(hist, params.max_code_len, len);
    const int max_len = *std::max_element(len.begin(), len.end());
    if (max_len == 0 && !exact) {  // a one-symbol sample: the tensor may well be constant
      exact = true;
      hist = exact_histogram(in, g, workers);
      continue;
    }
    if (max_len == 0) {  // at most one distinct symbol: no bitstreams
      const size_t total = kExponentHeaderBytes + static_cast<size_t>(in.count) * E::kRaw;
      if (out.size() < total)
        fail("output buffer of " + std::to_string(out.size()) + " bytes is smaller than the " +
             std::to_string(total) + "-byte stream");
      const auto sole = static_cast<uint8_t>(std::max_element(hist.begin(), hist.end()) - hist.begin());
      write_header(in, params, 0, sole, len, out.data());
      parallel_for(g.chunks, workers, [&](int64_t c, int) {
        const auto begin = static_cast<size_t>(g.chunk_begin(c));
        split_raw(in.dtype, in.data + begin * sizeof(typename E::U), g.chunk_size(c),
                  out.data() + kExponentHeaderBytes + begin * E::kRaw);
      });
      return total;
    }
    const size_t total = encode_all<E>(in, params, g, workers, hist, len, max_len, out);
    if (total > 0) return total;
    exact = true;  // the tensor holds a symbol the sample did not predict
    hist = exact_histogram(in, g, workers);
  }
}

}  // namespace

size_t exponent_max_compressed_bytes(TensorView in, const ExponentParams& params) {
  const Geometry g(in.count, params.chunk_elems, params.streams_per_chunk);
  const auto count = static_cast<size_t>(in.count);
  // Table entry and padding byte per stream, codes of at most max_code_len bits, raw bytes.
  return kExponentHeaderBytes + 5 * static_cast<size_t>(g.chunks * g.streams) +
         (count * static_cast<size_t>(params.max_code_len) + 7) / 8 + count * exponent_raw_bytes(in.dtype);
}

size_t exponent_compress(TensorView in, const ExponentParams& params, std::span<uint8_t> out) {
  validate(params);
  if (in.count < 0) fail("count: negative (" + std::to_string(in.count) + ")");
  switch (in.dtype) {
    case DType::BF16: return compress_typed<Bf16>(in, params, out);
    case DType::F16: return compress_typed<Fp16>(in, params, out);
    case DType::F32: return compress_typed<Fp32>(in, params, out);
  }
  fail("dtype: unknown");
}

}  // namespace mlsb::compress
