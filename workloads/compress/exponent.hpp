#pragma once
// `exponent`: lossless coding of floating-point tensors by entropy-coding the exponent field and
// storing sign + mantissa raw (the idea of DietGPU, ZipNN and ZipCCL: exponents of near-Gaussian
// LLM tensors carry ~2.6 bits of information in 8, mantissas are close to uniform).
//
// Stream format, version 1 (all integers little-endian). The CPU and CUDA paths read and write the
// same format, so either decodes the other's streams.
//   off  size
//   0    4    magic "MXE1"
//   4    1    dtype: 0 fp32, 1 fp16, 2 bf16
//   5    1    max_code_len L: 0 = every symbol equals `sole_symbol` (no bitstreams), else 1..12
//   6    1    sole_symbol (meaningful when L == 0)
//   7    1    reserved, 0
//   8    8    count: elements
//   16   4    chunk_elems (> 0): elements per chunk; chunks are independent units of parallel work
//   20   4    streams_per_chunk S (1..64): each chunk's symbols are split into S interleavable streams
//   24   256  code_len[256]: canonical Huffman code length of each symbol, 0 = absent (all 0 when L == 0)
//   280  4*N  stream_bytes[N], N = nchunks * S when L > 0 else 0, nchunks = ceil(count / chunk_elems)
//   ...       the bitstreams, concatenated in (chunk, stream) order
//   ...       raw section: count * raw_bytes(dtype) bytes, element order
// Symbol and raw bytes of one element x (the element's bits as an unsigned integer):
//   bf16: symbol = (x >> 7) & 0xFF (the exponent);  raw = ((x >> 8) & 0x80) | (x & 0x7F)        (1 byte)
//   fp32: symbol = (x >> 23) & 0xFF (the exponent); raw = ((x >> 8) & 0x800000) | (x & 0x7FFFFF) (3 bytes, LE)
//   fp16: symbol = x >> 8 (sign, 5 exponent bits, top 2 mantissa bits); raw = x & 0xFF          (1 byte)
//         (the 3 near-uniform bits ride along in the symbol so the raw part stays byte-aligned)
// Chunk c holds elements [c*chunk_elems, min(count, (c+1)*chunk_elems)); with n elements in the chunk,
// stream s holds its elements [min(n, s*q), min(n, (s+1)*q)), q = ceil(n / S) (trailing streams may be
// empty).
// Canonical Huffman (as DEFLATE, RFC 1951 3.2.2): codes of equal length are consecutive in symbol
// order, shorter codes precede longer ones; the lengths must satisfy Kraft's sum == 1 (or one
// symbol of length 1). Codes are written MSB-first: a stream's first code starts at the most
// significant bit of its first byte; the last byte is padded with zero bits.
// Validity (decoders reject anything else): every code_len[] <= L (encoders write L = the largest
// code length; the decoder sizes its tables by the largest code length, not by L); each stream's
// stream_bytes == ceil(bits of its codes / 8) (an empty stream has 0 bytes) and its padding bits are
// 0; the stream ends exactly at the end of the raw section. With one symbol of length 1 (the only
// incomplete code allowed) that symbol's code is the single bit 0 and every other bit pattern is
// invalid. The code need not be optimal for the tensor (the CPU encoder builds it from a sample of a
// large tensor), only cover every symbol present.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress {

/// Container layout constants of format version 1.
inline constexpr uint32_t kExponentMagic = 0x3145584D;  // "MXE1"
inline constexpr size_t kExponentHeaderBytes = 280;
inline constexpr int kExponentMaxCodeLen = 12;
inline constexpr int kExponentMaxStreams = 64;

/// Encoder parameters. CPU defaults favour few large streams; the CUDA encoder uses many small ones.
/// The CPU encoder takes the code from the exact histogram for tensors below 2^21 elements and from a
/// 1/16 strided sample above (falling back to the exact histogram when the sample misses a symbol).
struct ExponentParams {
  uint32_t chunk_elems = 1u << 20;
  uint32_t streams_per_chunk = 4;
  int max_code_len = 11;  ///< length limit of the Huffman code (<= kExponentMaxCodeLen)
  int threads = 1;        ///< chunks are coded by this many threads
};

/// Raw (sign+mantissa) bytes stored per element: bf16 1, fp16 1, fp32 3.
size_t exponent_raw_bytes(DType t);

/// The symbol histogram of a tensor (256 bins, per the symbol definition above); overwrites `hist`.
void exponent_histogram(TensorView in, std::span<uint64_t, 256> hist);

/// Shannon entropy in bits of a histogram.
double entropy_bits(std::span<const uint64_t, 256> hist);

/// The ideal lossless ratio of this decomposition: original bits / (raw bits + H(symbol)) per element,
/// H the empirical entropy of the tensor's symbols. 1.0 for an empty tensor.
double exponent_ideal_ratio(TensorView in);

/// Canonical Huffman code lengths (length-limited to max_len) for a histogram; absent symbols get 0.
/// A histogram with one distinct symbol gets all zeros (the L == 0 case of the format). The lengths
/// are optimal under the limit (package-merge, Larmore & Hirschberg 1990) and satisfy Kraft's sum == 1
/// for two or more symbols; ties break deterministically. Throws std::invalid_argument for max_len
/// outside 1..kExponentMaxCodeLen or more distinct symbols than 2^max_len.
void huffman_code_lengths(std::span<const uint64_t, 256> hist, int max_len, std::span<uint8_t, 256> lengths);

/// Canonical codes (RFC 1951 3.2.2) of code lengths: codes[s] is the lengths[s]-bit code of symbol s,
/// right-aligned (0 where lengths[s] == 0). Throws std::invalid_argument for a length above
/// kExponentMaxCodeLen or lengths violating Kraft's inequality.
void huffman_canonical_codes(std::span<const uint8_t, 256> lengths, std::span<uint16_t, 256> codes);

/// The codec (make_codec("exponent") returns one with default params and config.threads).
/// Throws std::invalid_argument naming the field for chunk_elems == 0, streams_per_chunk outside
/// 1..kExponentMaxStreams, max_code_len outside 8..kExponentMaxCodeLen (8 bits always fit 256
/// symbols), threads < 1, or a stream that could exceed the u32 stream_bytes field
/// (ceil(chunk_elems / streams_per_chunk) * max_code_len bits > 32 Gibit).
std::unique_ptr<Codec> make_exponent_codec(const ExponentParams& params);

/// Stream bytes exponent_compress() may write for `in` with `params`.
size_t exponent_max_compressed_bytes(TensorView in, const ExponentParams& params);

/// Compresses `in` into `out` with `params` (validated as make_exponent_codec does); returns the bytes
/// written. The stream is the same for every params.threads. Throws CodecError when `out` is too small.
size_t exponent_compress(TensorView in, const ExponentParams& params, std::span<uint8_t> out);

/// Decodes an exponent stream into `out` with `threads` threads. Throws CodecError (message names the
/// field, chunk or stream) for a corrupt stream or one whose dtype or count differs from `out`'s.
void exponent_decompress(std::span<const uint8_t> in, MutableTensorView out, int threads);

/// A parsed and validated container: the header, the code and where every bitstream lies. It checks
/// everything but the bitstreams' contents (magic, dtype, L, reserved byte, code lengths and Kraft's
/// sum, chunk_elems, S, the stream table against the buffer, the exact total size).
struct ExponentContainer {
  DType dtype = DType::F32;
  int max_code_len = 0;              ///< L of the header
  uint8_t sole_symbol = 0;           ///< the symbol of every element when max_code_len == 0
  int64_t count = 0;
  uint32_t chunk_elems = 1;
  uint32_t streams_per_chunk = 1;
  std::array<uint8_t, 256> code_len{};
  int64_t chunks = 0;                ///< ceil(count / chunk_elems)
  /// chunks * S + 1 byte offsets into the stream (empty when max_code_len == 0): stream i (chunk
  /// i / S, stream i % S) is [stream_begin[i], stream_begin[i + 1]).
  std::vector<uint64_t> stream_begin;
  uint64_t raw_begin = 0;            ///< byte offset of the raw section
};
/// Throws CodecError naming the field that is wrong.
ExponentContainer parse_exponent_container(std::span<const uint8_t> in);

}  // namespace mlsb::compress
