// Parsing and validation of the `exponent` container (format version 1, see exponent.hpp): everything
// but the contents of the bitstreams, which the decoder checks as it decodes them.
#include <cstring>
#include <string>

#include "workloads/compress/exponent.hpp"
#include "workloads/compress/exponent_detail.hpp"

namespace mlsb::compress {
namespace {

template <typename T>
T load_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // the format is little-endian, as every target of this project
  return v;
}

using exponent_detail::fail;

}  // namespace

ExponentContainer parse_exponent_container(std::span<const uint8_t> in) {
  if (in.size() < kExponentHeaderBytes)
    fail("stream of " + std::to_string(in.size()) + " bytes is shorter than the " +
         std::to_string(kExponentHeaderBytes) + "-byte header");
  const uint8_t* p = in.data();
  if (load_le<uint32_t>(p) != kExponentMagic) fail("bad magic (not an MXE1 stream)");
  ExponentContainer c;
  if (p[4] > 2) fail("dtype: unknown code " + std::to_string(p[4]));
  c.dtype = static_cast<DType>(p[4]);
  c.max_code_len = p[5];
  c.sole_symbol = p[6];
  if (c.max_code_len > kExponentMaxCodeLen)
    fail("max_code_len: " + std::to_string(c.max_code_len) + " exceeds " + std::to_string(kExponentMaxCodeLen));
  if (p[7] != 0) fail("reserved byte 7 is " + std::to_string(p[7]) + ", not 0");
  const uint64_t count = load_le<uint64_t>(p + 8);
  // Every element has at least one raw byte, which bounds count (and the arithmetic below).
  if (count > in.size()) fail("count: " + std::to_string(count) + " elements cannot fit the stream");
  c.count = static_cast<int64_t>(count);
  c.chunk_elems = load_le<uint32_t>(p + 16);
  c.streams_per_chunk = load_le<uint32_t>(p + 20);
  if (c.chunk_elems == 0) fail("chunk_elems is 0");
  if (c.streams_per_chunk < 1 || c.streams_per_chunk > static_cast<uint32_t>(kExponentMaxStreams))
    fail("streams_per_chunk: " + std::to_string(c.streams_per_chunk) + " is outside 1.." +
         std::to_string(kExponentMaxStreams));
  std::memcpy(c.code_len.data(), p + 24, 256);
  c.chunks = c.count == 0 ? 0 : (c.count - 1) / c.chunk_elems + 1;

  const uint64_t raw_bytes = count * exponent_raw_bytes(c.dtype);
  uint64_t pos = kExponentHeaderBytes;
  if (c.max_code_len == 0) {
    for (int s = 0; s < 256; ++s)
      if (c.code_len[s] != 0) fail("code_len[" + std::to_string(s) + "] is not 0 although max_code_len is 0");
  } else {
    // Kraft's sum in units of 2^-L: exactly 2^L, or a single symbol of length 1.
    uint64_t kraft = 0;
    int symbols = 0, last_len = 0;
    for (int s = 0; s < 256; ++s) {
      const int len = c.code_len[s];
      if (len == 0) continue;
      if (len > c.max_code_len)
        fail("code_len[" + std::to_string(s) + "] = " + std::to_string(len) + " exceeds max_code_len " +
             std::to_string(c.max_code_len));
      kraft += uint64_t{1} << (c.max_code_len - len);
      ++symbols;
      last_len = len;
    }
    const uint64_t full = uint64_t{1} << c.max_code_len;
    if (kraft != full && !(symbols == 1 && last_len == 1))
      fail("code lengths: Kraft sum is " + std::to_string(kraft) + "/" + std::to_string(full) +
           ", not 1 (and not a single 1-bit code)");
    // The stream table: N = chunks * S entries; checked against the buffer before it is allocated.
    const uint64_t n = static_cast<uint64_t>(c.chunks) * c.streams_per_chunk;
    if (n > (in.size() - kExponentHeaderBytes) / 4)
      fail("stream table of " + std::to_string(n) + " entries does not fit the " + std::to_string(in.size()) +
           "-byte stream");
    pos += 4 * n;
    c.stream_begin.resize(n + 1);
    const uint8_t* table = p + kExponentHeaderBytes;
    for (uint64_t i = 0; i < n; ++i) {
      c.stream_begin[i] = pos;
      const uint32_t bytes = load_le<uint32_t>(table + 4 * i);
      if (bytes > in.size() - pos)
        fail("stream_bytes: chunk " + std::to_string(i / c.streams_per_chunk) + " stream " +
             std::to_string(i % c.streams_per_chunk) + " (" + std::to_string(bytes) +
             " bytes) runs past the end of the stream");
      pos += bytes;
    }
    c.stream_begin[n] = pos;
  }
  c.raw_begin = pos;
  if (in.size() - pos != raw_bytes)
    fail("size: the stream has " + std::to_string(in.size()) + " bytes, the header and stream table say " +
         std::to_string(pos) + " + " + std::to_string(raw_bytes) + " raw bytes");
  return c;
}

}  // namespace mlsb::compress
