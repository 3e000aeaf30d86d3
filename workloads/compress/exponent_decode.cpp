// The `exponent` decoder (format in exponent.hpp): the container is validated first, then chunks are
// decoded in parallel. A chunk's streams are decoded four at a time in lockstep (independent dependency
// chains) with a multi-symbol lookup table, into a chunk-sized symbol buffer merged with the raw bytes
// (with streaming stores when the output is far larger than the caches).
// Fast loops run only while every read and write is provably in bounds; a checked tail finishes each
// stream and verifies it ends exactly in its last byte with zero padding. The stream decoding is also
// compiled for AVX2 and BMI2, chosen at run time (util/simd.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "util/simd.hpp"
#include "workloads/compress/exponent_detail.hpp"

namespace mlsb::compress {
namespace {

using namespace exponent_detail;

// Multi-symbol decode table indexed by the next kPeek bits of a stream, and the code lengths. Entry: bits 0-5
// the bits its symbols take, 8-15 how many symbols (1..kLookupSymbols), 16-63 the symbols (first in the low
// byte). Only codes wholly inside the peeked bits are taken.
// Peeking at more bits than the longest code lets one lookup yield more symbols; 12 bits keep the table in L1.
constexpr int kPeek = 12;
constexpr int kLookupSymbols = 6;
static_assert(kExponentMaxCodeLen <= kPeek);

struct DecodeTable {
  std::vector<uint64_t> entry;
  std::array<uint8_t, 256> len;
};

DecodeTable build_decode_table(const std::array<uint8_t, 256>& len) {
  std::array<uint16_t, 256> codes;
  huffman_canonical_codes(len, codes);
  const size_t size = size_t{1} << kPeek;
  std::vector<uint16_t> first(size);  // symbol << 8 | length of the code that starts the index
  for (int s = 0; s < 256; ++s) {
    if (len[s] == 0) continue;
    const int shift = kPeek - len[s];
    for (size_t j = size_t{codes[s]} << shift; j < (size_t{codes[s]} + 1) << shift; ++j)
      first[j] = static_cast<uint16_t>(s << 8 | len[s]);
  }
  DecodeTable t{std::vector<uint64_t>(size), len};
  for (size_t idx = 0; idx < size; ++idx) {
    uint64_t syms = 0;
    int used = 0, n = 0;
    for (; n < kLookupSymbols; ++n) {
      const uint16_t f = first[(idx << used) & (size - 1)];
      if ((f & 0xFF) > kPeek - used) break;
      syms |= uint64_t{static_cast<uint8_t>(f >> 8)} << (8 * n);
      used += f & 0xFF;
    }
    t.entry[idx] = uint64_t(used) | uint64_t(n) << 8 | syms << 16;
  }
  return t;
}

struct Cursor {
  const uint8_t* in;  // the stream's first byte
  uint64_t bytes;     // its size
  uint64_t bitpos;    // bits consumed
  uint8_t* out;       // next symbol
  uint8_t* end;       // one past the stream's last symbol
};

// Lookups of four table entries each that `c` can make without reading past its bytes (an 8-byte load
// at bitpos / 8 gives >= 57 bits, four entries take <= 4 * kPeek = 48) or writing past `end` (a round
// advances <= 4 * kLookupSymbols = 24 symbols, its last entry stores 8 bytes <= 18 symbols after its start).
int64_t safe_rounds(const Cursor& c) {
  const uint64_t limit = 8 * c.bytes;
  if (limit < c.bitpos + 64 || c.end - c.out < 32) return 0;
  return std::min<int64_t>(static_cast<int64_t>((limit - 64 - c.bitpos) / (4 * kPeek) + 1), (c.end - c.out - 8) / 24);
}

// A stream's moving state in the fast loop, passed by value so that it lives in registers: its bit
// position counted from a base shared by the lanes, and its next symbol.
struct Lane {
  uint64_t bit;
  uint8_t* out;
};

[[gnu::always_inline]] inline Lane to_lane(const Cursor& c, const uint8_t* base) {
  return Lane{8 * static_cast<uint64_t>(c.in - base) + c.bitpos, c.out};
}
[[gnu::always_inline]] inline void from_lane(Cursor& c, Lane l, const uint8_t* base) {
  c.bitpos = l.bit - 8 * static_cast<uint64_t>(c.in - base);
  c.out = l.out;
}

// Four lookups from one 64-bit read. The entries' sum holds their bit counts (<= 4 * kPeek < 64) in bits 0-5
// and their symbol counts (<= 24) in bits 8-15.
[[gnu::always_inline]] inline Lane decode_round(Lane l, const uint8_t* base, const uint64_t* table) {
  uint64_t buf = load_be64(base + (l.bit >> 3)) << (l.bit & 7);
  uint64_t sum = 0;
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const uint64_t e = table[buf >> (64 - kPeek)];
    const uint64_t syms = e >> 16;
    std::memcpy(l.out + ((sum >> 8) & 0xFF), &syms, 8);
    buf <<= e & 63;
    sum += e;
  }
  l.out += (sum >> 8) & 0xFF;
  l.bit += sum & 63;
  return l;
}

// Decodes N (1..4) streams in lockstep (independent dependency chains) while every one is far from its
// end. The lanes are separate variables: in an array they would stay in memory, where every symbol
// store might alias them.
template <int N>
[[gnu::always_inline]] inline void decode_fast(Cursor* cs, const DecodeTable& t) {
  const uint64_t* table = t.entry.data();
  const uint8_t* base = cs[0].in;  // streams follow one another
  for (;;) {
    int64_t rounds = INT64_MAX;
    for (int s = 0; s < N; ++s) rounds = std::min(rounds, safe_rounds(cs[s]));
    if (rounds == 0) return;
    Lane l0 = to_lane(cs[0], base), l1{}, l2{}, l3{};
    if constexpr (N > 1) l1 = to_lane(cs[1], base);
    if constexpr (N > 2) l2 = to_lane(cs[2], base);
    if constexpr (N > 3) l3 = to_lane(cs[3], base);
    for (int64_t r = 0; r < rounds; ++r) {
      l0 = decode_round(l0, base, table);
      if constexpr (N > 1) l1 = decode_round(l1, base, table);
      if constexpr (N > 2) l2 = decode_round(l2, base, table);
      if constexpr (N > 3) l3 = decode_round(l3, base, table);
    }
    from_lane(cs[0], l0, base);
    if constexpr (N > 1) from_lane(cs[1], l1, base);
    if constexpr (N > 2) from_lane(cs[2], l2, base);
    if constexpr (N > 3) from_lane(cs[3], l3, base);
  }
}

// Decodes the rest of a stream one symbol at a time with bounded reads, then checks that its codes
// end in its last byte and that the padding bits are zero.
void decode_tail(Cursor& c, const DecodeTable& t) {
  const uint64_t limit = 8 * c.bytes;
  while (c.out < c.end) {
    const uint64_t byte = c.bitpos >> 3;
    uint64_t buf;
    if (byte + 8 <= c.bytes) {
      buf = load_be64(c.in + byte);
    } else {
      buf = 0;
      for (uint64_t k = 0; byte + k < c.bytes; ++k) buf |= uint64_t{c.in[byte + k]} << (56 - 8 * k);
    }
    buf <<= c.bitpos & 7;
    const auto sym = static_cast<uint8_t>(t.entry[buf >> (64 - kPeek)] >> 16);
    const uint64_t len = t.len[sym];
    if (c.bitpos + len > limit) throw CodecError("runs past its " + std::to_string(c.bytes) + " bytes");
    *c.out++ = sym;
    c.bitpos += len;
  }
  if ((c.bitpos + 7) / 8 != c.bytes)
    throw CodecError("its codes end after " + std::to_string(c.bitpos) + " bits but it has " +
                     std::to_string(c.bytes) + " bytes");
  if ((c.bitpos & 7) != 0 && (c.in[c.bytes - 1] & (0xFFu >> (c.bitpos & 7))) != 0)
    throw CodecError("padding bits are not zero");
}

// Decodes the rest of stream `s` of chunk `ch`; errors name both.
[[gnu::always_inline]] inline void finish_stream(Cursor& c, const DecodeTable& t, int64_t ch, int64_t s) {
  decode_fast<1>(&c, t);
  try {
    decode_tail(c, t);
  } catch (const CodecError& e) {
    fail("chunk " + std::to_string(ch) + " stream " + std::to_string(s) + ": " + e.what());
  }
}

// Decodes a chunk's streams: four at a time in lockstep, then each to its end.
[[gnu::always_inline]] inline void decode_streams_body(Cursor* cs, int64_t streams, const DecodeTable& t, int64_t ch) {
  int64_t s = 0;
  for (; s + 4 <= streams; s += 4) {
    decode_fast<4>(cs + s, t);
    for (int k = 0; k < 4; ++k) finish_stream(cs[s + k], t, ch, s + k);
  }
  if (streams - s == 3) decode_fast<3>(cs + s, t);
  if (streams - s == 2) decode_fast<2>(cs + s, t);
  for (; s < streams; ++s) finish_stream(cs[s], t, ch, s);
}

// The same code compiled for AVX2 and BMI2 (shifts by a register without the CL register) where the CPU has them.
void decode_streams_portable(Cursor* cs, int64_t streams, const DecodeTable& t, int64_t ch) {
  decode_streams_body(cs, streams, t, ch);
}
#ifdef MLSB_SIMD_X86
MLSB_TARGET_AVX2 void decode_streams_avx2(Cursor* cs, int64_t streams, const DecodeTable& t, int64_t ch) {
  decode_streams_body(cs, streams, t, ch);
}
#endif

void decode_streams(Cursor* cs, int64_t streams, const DecodeTable& t, int64_t ch) {
#ifdef MLSB_SIMD_X86
  if (simd_level() >= Simd::avx2) return decode_streams_avx2(cs, streams, t, ch);
#endif
  decode_streams_portable(cs, streams, t, ch);
}

// Outputs at least this large are written with streaming stores: they would not stay in the caches anyway, and
// the stores need not read the lines they replace.
constexpr size_t kStreamingBytes = size_t{32} << 20;

template <typename E>
void decompress_typed(std::span<const uint8_t> in, const ExponentContainer& c, MutableTensorView out,
                      int threads) {
  constexpr size_t kSize = sizeof(typename E::U);
  const Geometry g(c.count, c.chunk_elems, c.streams_per_chunk);
  const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, g.chunks)));
  int lone = -1;  // the symbol of a single 1-bit code (its only valid code is the bit 0)
  int max_len = 0;
  for (int s = 0; s < 256; ++s) max_len = std::max<int>(max_len, c.code_len[s]);
  if (c.max_code_len > 0 && max_len == 1 && std::count(c.code_len.begin(), c.code_len.end(), 1) == 1)
    lone = static_cast<int>(std::find(c.code_len.begin(), c.code_len.end(), 1) - c.code_len.begin());
  DecodeTable table;
  if (c.max_code_len > 0 && lone < 0) table = build_decode_table(c.code_len);
  std::vector<std::vector<uint8_t>> scratch(static_cast<size_t>(workers));
  const uint8_t* raw = in.data() + c.raw_begin;
  const Stores how = out.bytes() >= kStreamingBytes ? Stores::streaming : Stores::cached;

  parallel_for(g.chunks, workers, [&](int64_t ch, int w) {
    const int64_t n = g.chunk_size(ch), begin = g.chunk_begin(ch);
    auto& sym = scratch[static_cast<size_t>(w)];
    if (sym.size() < static_cast<size_t>(n)) sym.resize(static_cast<size_t>(n));
    if (c.max_code_len == 0 || lone >= 0) {
      std::memset(sym.data(), c.max_code_len == 0 ? c.sole_symbol : lone, static_cast<size_t>(n));
      for (int64_t s = 0; s < g.streams && lone >= 0; ++s) {
        const size_t i = static_cast<size_t>(ch * g.streams + s);
        const uint64_t bytes = c.stream_begin[i + 1] - c.stream_begin[i];
        const auto elems = static_cast<uint64_t>(g.stream_begin(n, s + 1) - g.stream_begin(n, s));
        const uint8_t* p = in.data() + c.stream_begin[i];
        if (bytes != (elems + 7) / 8 || std::any_of(p, p + bytes, [](uint8_t b) { return b != 0; }))
          fail("chunk " + std::to_string(ch) + " stream " + std::to_string(s) +
               ": a single 1-bit code allows only zero bits, " + std::to_string((elems + 7) / 8) + " bytes");
      }
    } else {
      Cursor cs[kExponentMaxStreams];
      for (int64_t s = 0; s < g.streams; ++s) {
        const size_t i = static_cast<size_t>(ch * g.streams + s);
        cs[s] = Cursor{in.data() + c.stream_begin[i], c.stream_begin[i + 1] - c.stream_begin[i], 0,
                       sym.data() + g.stream_begin(n, s), sym.data() + g.stream_begin(n, s + 1)};
      }
      decode_streams(cs, g.streams, table, ch);
    }
    merge(E{}, sym.data(), raw + begin * E::kRaw, n, out.data + begin * kSize, how);
    if (how == Stores::streaming) store_fence();
  });
}

}  // namespace

void exponent_decompress(std::span<const uint8_t> in, MutableTensorView out, int threads) {
  if (threads < 1) throw std::invalid_argument("threads: must be at least 1 (got " + std::to_string(threads) + ")");
  const ExponentContainer c = parse_exponent_container(in);
  if (c.dtype != out.dtype)
    fail("dtype: the stream holds " + std::string(to_string(c.dtype)) + ", the output is " +
         std::string(to_string(out.dtype)));
  if (c.count != out.count)
    fail("count: the stream holds " + std::to_string(c.count) + " elements, the output has " +
         std::to_string(out.count));
  switch (c.dtype) {
    case DType::BF16: return decompress_typed<Bf16>(in, c, out, threads);
    case DType::F16: return decompress_typed<Fp16>(in, c, out, threads);
    case DType::F32: return decompress_typed<Fp32>(in, c, out, threads);
  }
}

}  // namespace mlsb::compress
