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
// stream s holds its elements [s*q, min(n, (s+1)*q)), q = ceil(n / S) (trailing streams may be empty).
// Canonical Huffman (as DEFLATE, RFC 1951 3.2.2): codes of equal length are consecutive in symbol
// order, shorter codes precede longer ones; the lengths must satisfy Kraft's sum == 1 (or one
// symbol of length 1). Codes are written MSB-first: a stream's first code starts at the most
// significant bit of its first byte; the last byte is padded with zero bits.
#include <cstdint>
#include <span>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress {

/// Container layout constants of format version 1.
inline constexpr uint32_t kExponentMagic = 0x3145584D;  // "MXE1"
inline constexpr size_t kExponentHeaderBytes = 280;
inline constexpr int kExponentMaxCodeLen = 12;
inline constexpr int kExponentMaxStreams = 64;

/// Encoder parameters. CPU defaults favour few large streams; the CUDA encoder uses many small ones.
struct ExponentParams {
  uint32_t chunk_elems = 1u << 20;
  uint32_t streams_per_chunk = 4;
  int max_code_len = 11;  ///< length limit of the Huffman code (<= kExponentMaxCodeLen)
  int threads = 1;        ///< chunks are coded by this many threads
};

/// Raw (sign+mantissa) bytes stored per element: bf16 1, fp16 1, fp32 3.
size_t exponent_raw_bytes(DType t);

/// The symbol histogram of a tensor (256 bins, per the symbol definition above).
void exponent_histogram(TensorView in, std::span<uint64_t, 256> hist);

/// Shannon entropy in bits of a histogram.
double entropy_bits(std::span<const uint64_t, 256> hist);

/// The ideal lossless ratio of this decomposition: original bits / (raw bits + H(symbol)) per element,
/// H the empirical entropy of the tensor's symbols. 1.0 for an empty tensor.
double exponent_ideal_ratio(TensorView in);

/// Canonical Huffman code lengths (length-limited to max_len) for a histogram; absent symbols get 0.
/// A histogram with one distinct symbol gets all zeros (the L == 0 case of the format).
void huffman_code_lengths(std::span<const uint64_t, 256> hist, int max_len, std::span<uint8_t, 256> lengths);

/// The codec (make_codec("exponent") returns one with default params and config.threads).
std::unique_ptr<Codec> make_exponent_codec(const ExponentParams& params);

}  // namespace mlsb::compress
