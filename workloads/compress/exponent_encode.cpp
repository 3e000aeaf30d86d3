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

// Per symbol and per pair of symbols (index s0 | s1 << 8, the byte order of two adjacent symbols):
// code << 8 | kMissing | length, the pair's code (at most 24 bits) being code(s0) code(s1). kMissing
// (bit 6) marks entries involving a symbol without a code, which adds no bits; lengths (<= 24) stay in
// bits 0-5, so the sum of two entries' low 6 bits is their total length.
constexpr uint32_t kMissing = 64;

struct EncodeTable {
  std::array<uint32_t, 256> single;
  std::vector<uint32_t> pair;
};

EncodeTable build_encode_table(const std::array<uint8_t, 256>& len) {
  std::array<uint16_t, 256> codes;
  huffman_canonical_codes(len, codes);
  EncodeTable t;
  t.pair.resize(size_t{1} << 16);
  for (uint32_t a = 0; a < 256; ++a) {
    const uint32_t missing_a = len[a] == 0 ? kMissing : 0;
    t.single[a] = uint32_t{codes[a]} << 8 | missing_a | len[a];
    for (uint32_t b = 0; b < 256; ++b)
      t.pair[a | b << 8] = (uint32_t{codes[a]} << len[b] | codes[b]) << 8 | missing_a |
                           (len[b] == 0 ? kMissing : 0) | (len[a] + len[b]);
  }
  return t;
}

// Encodes elements [0, n) of `src`: codes MSB-first to `dst` (returns the bytes written), raw bytes to
// `raw`, kMissing into `missing` when a symbol has no code. The 8-byte stores of the fast loop stay
// within ceil(n * max_len / 8) bytes, and within the exact size when every symbol has a code, because
// at least 64 more codes follow each of them.
template <typename E>
[[gnu::always_inline]] inline size_t encode_stream_body(const uint8_t* src, int64_t n, const EncodeTable& t,
                                                        uint8_t* dst, uint8_t* raw, uint32_t& missing) {
  uint8_t sym[kBlock];
  const uint32_t* pair = t.pair.data();
  uint8_t* p = dst;
  uint64_t acc = 0;
  unsigned bits = 0;
  uint32_t flags = 0;
  for (int64_t block = 0; block < n; block += kBlock) {
    const int64_t m = std::min(kBlock, n - block);
    split(E{}, src + block * static_cast<int64_t>(sizeof(typename E::U)), m, sym,
          raw + block * static_cast<int64_t>(E::kRaw));
    int64_t j = 0;
    // The next block streams in from memory while this one is coded.
    // (An address, not a pointer: past the tensor's end it is only a hint, which never faults.)
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(src) + static_cast<uintptr_t>(block + kBlock) * sizeof(typename E::U);
    for (const int64_t fast = std::min(m, n - 64 - block); j + 8 <= fast; j += 8) {
      __builtin_prefetch(reinterpret_cast<const void*>(ahead + static_cast<uintptr_t>(j) * sizeof(typename E::U)));
      uint16_t i[4];
      std::memcpy(i, sym + j, 8);
      const uint32_t a = pair[i[0]], b = pair[i[1]], c = pair[i[2]], d = pair[i[3]];
      const uint32_t sab = a + b, scd = c + d;  // bits 6-7 count the missing flags of two entries
      flags |= sab | scd;
      const unsigned ab = sab & 63, cd = scd & 63;  // four codes each: at most 48 bits
      const uint64_t vab = (uint64_t{a >> 8} << (b & 63)) | (b >> 8), vcd = (uint64_t{c >> 8} << (d & 63)) | (d >> 8);
      if (ab + cd <= 56) [[likely]] {  // eight codes at once: bits stays <= 63
        acc = (acc << (ab + cd)) | (vab << cd) | vcd;
        bits += ab + cd;
      } else {
        acc = (acc << ab) | vab;
        bits += ab;
        store_be64(p, (acc << 1) << (63 - bits));
        p += bits >> 3;
        bits &= 7;
        acc = (acc << cd) | vcd;
        bits += cd;
      }
      store_be64(p, (acc << 1) << (63 - bits));  // bits may be 0 when a code is missing
      p += bits >> 3;
      bits &= 7;
    }
    for (; j < m; ++j) {
      const uint32_t e = t.single[sym[j]];
      flags |= e;
      acc = (acc << (e & 63)) | (e >> 8);
      bits += e & 63;
      for (; bits >= 8; bits -= 8) *p++ = static_cast<uint8_t>(acc >> (bits - 8));
    }
  }
  if (bits > 0) *p++ = static_cast<uint8_t>(acc << (8 - bits));
  missing |= (flags & 3 * kMissing) != 0 ? kMissing : 0;
  return static_cast<size_t>(p - dst);
}

// The same code compiled for AVX2 and BMI2 (shifts by a register without the CL register) where the CPU has them.
template <typename E>
size_t encode_stream_portable(const uint8_t* src, int64_t n, const EncodeTable& t, uint8_t* dst, uint8_t* raw,
                              uint32_t& missing) {
  return encode_stream_body<E>(src, n, t, dst, raw, missing);
}
#ifdef MLSB_SIMD_X86
template <typename E>
MLSB_TARGET_AVX2 size_t encode_stream_avx2(const uint8_t* src, int64_t n, const EncodeTable& t, uint8_t* dst,
                                           uint8_t* raw, uint32_t& missing) {
  return encode_stream_body<E>(src, n, t, dst, raw, missing);
}
#endif

template <typename E>
size_t encode_stream(const uint8_t* src, int64_t n, const EncodeTable& t, uint8_t* dst, uint8_t* raw,
                     uint32_t& missing) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return encode_stream_avx2<E>(src, n, t, dst, raw, missing);
#endif
  return encode_stream_portable<E>(src, n, t, dst, raw, missing);
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
                  const std::array<uint8_t, 256>& len, int max_len, std::span<uint8_t> out) {
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

  const EncodeTable table = build_encode_table(len);
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
    const size_t total = encode_all<E>(in, params, g, workers, len, max_len, out);
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
